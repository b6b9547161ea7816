// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// One event is reused for both hand-offs. It is recorded on s1 after the
// allocation (s2 waits: fine), but s1 then waits on it BEFORE it is
// re-recorded on s2 after the kernel: the wait sees the old record on s1, so
// the free on s1 is not ordered after the 20 ms kernel on s2.
#include "common.cuh"

int main() {
    sc::init("event_rerecord_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t e = sc::make_event();

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    SC_CHECK(cudaEventRecord(e, s1));
    SC_CHECK(cudaStreamWaitEvent(s2, e, 0));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(p, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();

    SC_CHECK(cudaStreamWaitEvent(s1, e, 0));  // BUG: still the record from s1
    SC_CHECK(cudaEventRecord(e, s2));         // re-recorded too late
    SC_CHECK(cudaFreeAsync(p, s1));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaEventDestroy(e));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
