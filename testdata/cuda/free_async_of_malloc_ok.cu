// streamcheck-expect: clean
//
// cudaFreeAsync on s1 of cudaMalloc memory after s1 waited on an event
// recorded on s2 after the kernel that uses it.
#include "common.cuh"

int main() {
    sc::init("free_async_of_malloc_ok");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t used = sc::make_event();

    int* p = nullptr;
    SC_CHECK(cudaMalloc((void**)&p, sc::kBytes));

    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(p, sc::kN, sc::ms(10));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecord(used, s2));

    SC_CHECK(cudaStreamWaitEvent(s1, used, 0));
    SC_CHECK(cudaFreeAsync(p, s1));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaEventDestroy(used));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
