// streamcheck-expect: use-before-alloc
// streamcheck-expect-count: 1
//
// The buffer is allocated on s1 behind a 20 ms spin kernel, and a kernel on s2
// uses it right away: s2 never waits for s1, so the use is not ordered after
// the stream-ordered allocation. Cleanup is fully synchronized.
#include "common.cuh"

int main() {
    sc::init("use_before_alloc_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);

    sc_spin<<<1, 32, 0, s1>>>(sc::ms(20));  // the allocation happens late on the GPU
    SC_CHECK_LAUNCH();
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));

    // BUG: no event / synchronization between s1 and s2.
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(p, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFreeAsync(p, s1));
    SC_CHECK(cudaStreamSynchronize(s1));

    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
