// streamcheck-expect: use-before-alloc
// streamcheck-expect-count: 1
//
// The buffer is allocated on cudaStreamPerThread behind a 20 ms spin kernel
// and used on a cudaStreamNonBlocking stream, which synchronizes with neither
// the legacy nor the per-thread default stream.
#include "common.cuh"

int main() {
    sc::init("per_thread_stream_racy");
    cudaStream_t ptds = cudaStreamPerThread;
    cudaStream_t nb = sc::make_stream(true);

    sc_spin<<<1, 32, 0, ptds>>>(sc::ms(20));
    SC_CHECK_LAUNCH();
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, ptds));

    // BUG: nothing orders the non-blocking stream after the per-thread stream.
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, nb>>>(p, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFreeAsync(p, ptds));
    SC_CHECK(cudaStreamSynchronize(ptds));

    SC_CHECK(cudaStreamDestroy(nb));
    return sc::finish();
}
