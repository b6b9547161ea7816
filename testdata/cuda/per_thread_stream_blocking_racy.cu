// streamcheck-expect: use-before-alloc
// streamcheck-expect-count: 1
//
// A common misconception: the per-thread default stream synchronizes with the
// LEGACY default stream only, not with other blocking streams. The buffer is
// allocated on cudaStreamPerThread behind a 20 ms spin and used on a blocking
// stream created with cudaStreamCreate, with no legacy-stream work between.
#include "common.cuh"

int main() {
    sc::init("per_thread_stream_blocking_racy");
    cudaStream_t ptds = cudaStreamPerThread;
    cudaStream_t blocking = nullptr;
    SC_CHECK(cudaStreamCreate(&blocking));

    sc_spin<<<1, 32, 0, ptds>>>(sc::ms(20));
    SC_CHECK_LAUNCH();
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, ptds));

    // BUG: two blocking streams do not synchronize with each other.
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, blocking>>>(p, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFreeAsync(p, ptds));
    SC_CHECK(cudaStreamSynchronize(ptds));

    SC_CHECK(cudaStreamDestroy(blocking));
    return sc::finish();
}
