// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// The host polls the event once instead of looping: cudaEventQuery returns
// cudaErrorNotReady (the kernel runs for 50 ms), which orders nothing, and
// the host goes on to free the buffer on s2. The allocation was ordered
// before the host by a stream synchronize, so only the in-flight use is wrong.
#include "common.cuh"

int main() {
    sc::init("event_query_loop_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t e = sc::make_event();

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    SC_CHECK(cudaStreamSynchronize(s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, sc::kN, sc::ms(50));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecord(e, s1));

    // BUG: a single query; its result is ignored.
    const cudaError_t r = cudaEventQuery(e);
    if (r == cudaSuccess) {
        sc::note("event query unexpectedly returned cudaSuccess: the race was not recorded");
    } else if (r != cudaErrorNotReady) {
        SC_CHECK(r);
    }
    SC_CHECK(cudaFreeAsync(p, s2));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaEventDestroy(e));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
