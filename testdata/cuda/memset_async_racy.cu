// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// The buffer is handed from s1 to s2, where a cudaMemsetAsync runs behind a
// 20 ms spin kernel; s1 frees it without waiting for the memset.
#include "common.cuh"

int main() {
    sc::init("memset_async_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t allocated = sc::make_event();

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    SC_CHECK(cudaEventRecord(allocated, s1));
    SC_CHECK(cudaStreamWaitEvent(s2, allocated, 0));
    sc_spin<<<1, 32, 0, s2>>>(sc::ms(20));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaMemsetAsync(p, 0, sc::kBytes, s2));

    // BUG: s1 does not wait for the memset on s2.
    SC_CHECK(cudaFreeAsync(p, s1));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaEventDestroy(allocated));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
