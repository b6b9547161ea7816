// streamcheck-expect: use-before-alloc
// streamcheck-expect-count: 1
//
// p is allocated on s1 behind a 20 ms spin; the host synchronizes the WRONG
// stream (s2) and then uses p on s2.
#include "common.cuh"

int main() {
    sc::init("stream_sync_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);

    sc_spin<<<1, 32, 0, s1>>>(sc::ms(20));
    SC_CHECK_LAUNCH();
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));

    SC_CHECK(cudaStreamSynchronize(s2));  // BUG: should be s1
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(p, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFreeAsync(p, s1));
    SC_CHECK(cudaStreamSynchronize(s1));

    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
