// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// The kernel on s2 receives only the interior pointer p + 100; the analyzer
// must attribute it to p's allocation. s1 frees p without waiting for s2.
#include "common.cuh"

int main() {
    sc::init("interior_pointer_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t allocated = sc::make_event();

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    SC_CHECK(cudaEventRecord(allocated, s1));
    SC_CHECK(cudaStreamWaitEvent(s2, allocated, 0));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(p + 100, sc::kN - 100, sc::ms(20));
    SC_CHECK_LAUNCH();

    // BUG: s1 does not wait for the kernel on s2.
    SC_CHECK(cudaFreeAsync(p, s1));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaEventDestroy(allocated));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
