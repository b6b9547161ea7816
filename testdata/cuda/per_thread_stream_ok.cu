// streamcheck-expect: clean
//
// cudaStreamPerThread is a blocking stream: it synchronizes with the legacy
// default stream (but not with other blocking streams). The buffer is
// allocated on the per-thread stream, used on the legacy stream (which waits
// for the per-thread stream), then on a blocking stream (which waits for the
// legacy stream); a tiny legacy-stream kernel then waits for the blocking
// stream, and the free on the per-thread stream waits for that kernel.
#include "common.cuh"

int main() {
    sc::init("per_thread_stream_ok");
    cudaStream_t ptds = cudaStreamPerThread;
    cudaStream_t legacy = 0;
    cudaStream_t blocking = nullptr;
    SC_CHECK(cudaStreamCreate(&blocking));

    sc_spin<<<1, 32, 0, ptds>>>(sc::ms(20));
    SC_CHECK_LAUNCH();
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, ptds));

    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, legacy>>>(p, sc::kN, sc::ms(2));
    SC_CHECK_LAUNCH();
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, blocking>>>(p, sc::kN, sc::ms(10));
    SC_CHECK_LAUNCH();
    sc_spin<<<1, 32, 0, legacy>>>(sc::ms(0.1));  // joins the blocking stream into the legacy stream
    SC_CHECK_LAUNCH();

    SC_CHECK(cudaFreeAsync(p, ptds));
    SC_CHECK(cudaStreamSynchronize(ptds));

    SC_CHECK(cudaStreamDestroy(blocking));
    return sc::finish();
}
