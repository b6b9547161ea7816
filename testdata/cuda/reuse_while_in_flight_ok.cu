// streamcheck-expect: clean
//
// Like reuse_while_in_flight_racy, but s2 waits on an event recorded on s1
// after q's allocation (and so after the old kernel), and q is freed on s1
// after an event from s2.
#include "common.cuh"

int main() {
    sc::init("reuse_while_in_flight_ok");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t allocated = sc::make_event();
    cudaEvent_t used = sc::make_event();

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaFreeAsync(p, s1));

    int* q = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&q, sc::kBytes, s1));
    sc::note_reuse(p, q);
    SC_CHECK(cudaEventRecord(allocated, s1));

    SC_CHECK(cudaStreamWaitEvent(s2, allocated, 0));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(q, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecord(used, s2));

    SC_CHECK(cudaStreamWaitEvent(s1, used, 0));
    SC_CHECK(cudaFreeAsync(q, s1));
    SC_CHECK(cudaStreamSynchronize(s1));

    SC_CHECK(cudaEventDestroy(allocated));
    SC_CHECK(cudaEventDestroy(used));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
