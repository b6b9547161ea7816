// streamcheck-expect: clean
//
// One event reused for both hand-offs, in the right order: recorded on s1
// after the allocation, waited by s2, re-recorded on s2 after the kernel, and
// only then waited by s1: the wait sees the newest record, so the free is
// ordered after the kernel.
#include "common.cuh"

int main() {
    sc::init("event_rerecord_ok");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t e = sc::make_event();

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    SC_CHECK(cudaEventRecord(e, s1));
    SC_CHECK(cudaStreamWaitEvent(s2, e, 0));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(p, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();

    SC_CHECK(cudaEventRecord(e, s2));  // re-record after the use
    SC_CHECK(cudaStreamWaitEvent(s1, e, 0));
    SC_CHECK(cudaFreeAsync(p, s1));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaEventDestroy(e));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
