// streamcheck-expect: clean
//
// The event is recorded on s1 after the allocation; s2 waits on it before the
// kernel; a second event hands the buffer back to s1 for the free.
#include "common.cuh"

int main() {
    sc::init("event_record_wait_ok");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t ready = sc::make_event();
    cudaEvent_t done = sc::make_event();

    sc_spin<<<1, 32, 0, s1>>>(sc::ms(20));
    SC_CHECK_LAUNCH();
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    SC_CHECK(cudaEventRecord(ready, s1));

    SC_CHECK(cudaStreamWaitEvent(s2, ready, 0));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(p, sc::kN, sc::ms(5));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecord(done, s2));

    SC_CHECK(cudaStreamWaitEvent(s1, done, 0));
    SC_CHECK(cudaFreeAsync(p, s1));
    SC_CHECK(cudaStreamSynchronize(s1));

    SC_CHECK(cudaEventDestroy(ready));
    SC_CHECK(cudaEventDestroy(done));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
