// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// cudaDeviceSynchronize is called after the allocation but before the 20 ms
// kernel on s2 is launched, so it does not order the free on s1 after it.
#include "common.cuh"

int main() {
    sc::init("device_sync_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    SC_CHECK(cudaDeviceSynchronize());

    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(p, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();
    // BUG: missing cudaDeviceSynchronize here.
    SC_CHECK(cudaFreeAsync(p, s1));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
