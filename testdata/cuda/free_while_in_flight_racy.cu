// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// p is allocated on s1 and handed to s2 with an event; a 20 ms kernel on s2
// uses it, and s1 frees it without waiting for s2.
#include "common.cuh"

int main() {
    sc::init("free_while_in_flight_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t allocated = sc::make_event();

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    SC_CHECK(cudaEventRecord(allocated, s1));
    SC_CHECK(cudaStreamWaitEvent(s2, allocated, 0));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(p, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();

    // BUG: s1 does not wait for the kernel on s2.
    SC_CHECK(cudaFreeAsync(p, s1));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaEventDestroy(allocated));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
