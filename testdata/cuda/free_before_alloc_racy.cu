// streamcheck-expect: free-before-alloc
// streamcheck-expect-count: 1
//
// p is allocated on s1 behind a 20 ms spin kernel and freed on s2 with no
// synchronization: the free is not ordered after the allocation. p is never
// used, so nothing else is wrong.
#include "common.cuh"

int main() {
    sc::init("free_before_alloc_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);

    sc_spin<<<1, 32, 0, s1>>>(sc::ms(20));
    SC_CHECK_LAUNCH();
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));

    // BUG: s2 does not wait for the allocation on s1.
    SC_CHECK(cudaFreeAsync(p, s2));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
