// streamcheck-expect: use-before-alloc
// streamcheck-expect-count: 1
//
// Stale event: `ready` is recorded on s1 BEFORE the allocation (and before a
// 20 ms spin kernel), so s2's wait on it does not order the later allocation.
#include "common.cuh"

int main() {
    sc::init("event_record_wait_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t ready = sc::make_event();

    SC_CHECK(cudaEventRecord(ready, s1));  // BUG: recorded too early
    sc_spin<<<1, 32, 0, s1>>>(sc::ms(20));
    SC_CHECK_LAUNCH();
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));

    SC_CHECK(cudaStreamWaitEvent(s2, ready, 0));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(p, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFreeAsync(p, s1));
    SC_CHECK(cudaStreamSynchronize(s1));

    SC_CHECK(cudaEventDestroy(ready));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
