// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// p is allocated on s2 and handed to s1 with an event; a 20 ms kernel on s1
// uses it. The host then polls the WRONG stream (s2, which is idle) until
// cudaStreamQuery returns cudaSuccess and frees p on s2: the free is ordered
// after the allocation but not after the kernel on s1.
#include "common.cuh"

int main() {
    sc::init("stream_query_loop_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t allocated = sc::make_event();

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s2));
    SC_CHECK(cudaEventRecord(allocated, s2));
    SC_CHECK(cudaStreamWaitEvent(s1, allocated, 0));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();

    cudaError_t r;
    while ((r = cudaStreamQuery(s2)) == cudaErrorNotReady) {  // BUG: should poll s1
    }
    SC_CHECK(r);
    SC_CHECK(cudaFreeAsync(p, s2));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaEventDestroy(allocated));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
