// streamcheck-expect: clean
//
// stream_query_loop_racy polling the right stream: once cudaStreamQuery(s1)
// returns cudaSuccess the host is ordered after the kernel on s1.
#include "common.cuh"

int main() {
    sc::init("stream_query_loop_ok");
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
    long polls = 0;
    while ((r = cudaStreamQuery(s1)) == cudaErrorNotReady) {
        ++polls;
    }
    SC_CHECK(r);
    std::printf("STREAMCHECK_NOTE stream polled %ld times before cudaSuccess\n", polls);
    SC_CHECK(cudaFreeAsync(p, s2));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaEventDestroy(allocated));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
