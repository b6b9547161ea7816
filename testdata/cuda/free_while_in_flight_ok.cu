// streamcheck-expect: clean
//
// Like free_while_in_flight_racy, but s1 waits on an event recorded on s2
// after the kernel before it frees.
#include "common.cuh"

int main() {
    sc::init("free_while_in_flight_ok");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t allocated = sc::make_event();
    cudaEvent_t used = sc::make_event();

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    SC_CHECK(cudaEventRecord(allocated, s1));
    SC_CHECK(cudaStreamWaitEvent(s2, allocated, 0));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(p, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecord(used, s2));

    SC_CHECK(cudaStreamWaitEvent(s1, used, 0));
    SC_CHECK(cudaFreeAsync(p, s1));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaEventDestroy(allocated));
    SC_CHECK(cudaEventDestroy(used));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
