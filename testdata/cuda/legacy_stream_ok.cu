// streamcheck-expect: clean
//
// p is allocated on the legacy default stream (0) and used on a blocking
// stream (cudaStreamCreate): blocking-stream work waits for earlier legacy
// work. The free goes to the legacy stream again, spelled cudaStreamLegacy
// this time: legacy work waits for earlier work of all blocking streams.
#include "common.cuh"

int main() {
    sc::init("legacy_stream_ok");
    cudaStream_t legacy = 0;
    cudaStream_t blocking = nullptr;
    SC_CHECK(cudaStreamCreate(&blocking));

    sc_spin<<<1, 32, 0, legacy>>>(sc::ms(20));
    SC_CHECK_LAUNCH();
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, legacy));

    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, blocking>>>(p, sc::kN, sc::ms(10));
    SC_CHECK_LAUNCH();

    SC_CHECK(cudaFreeAsync(p, cudaStreamLegacy));
    SC_CHECK(cudaStreamSynchronize(cudaStreamLegacy));

    SC_CHECK(cudaStreamDestroy(blocking));
    return sc::finish();
}
