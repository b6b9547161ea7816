// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// The event is recorded on s1 after the allocation but BEFORE the 20 ms
// kernel, so cudaEventSynchronize orders the host after the allocation only;
// the free on s2 races with the kernel.
#include "common.cuh"

int main() {
    sc::init("event_sync_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t e = sc::make_event();

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    SC_CHECK(cudaEventRecord(e, s1));  // BUG: should be after the kernel
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();

    SC_CHECK(cudaEventSynchronize(e));
    SC_CHECK(cudaFreeAsync(p, s2));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaEventDestroy(e));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
