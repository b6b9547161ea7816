// streamcheck-expect: clean
//
// The host polls cudaEventQuery until it stops returning cudaErrorNotReady;
// the final cudaSuccess orders the host after the kernel, so the free on
// another stream is safe.
#include "common.cuh"

int main() {
    sc::init("event_query_loop_ok");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t e = sc::make_event();

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecord(e, s1));

    cudaError_t r;
    long polls = 0;
    while ((r = cudaEventQuery(e)) == cudaErrorNotReady) {
        ++polls;
    }
    SC_CHECK(r);
    std::printf("STREAMCHECK_NOTE event polled %ld times before cudaSuccess\n", polls);

    SC_CHECK(cudaFreeAsync(p, s2));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaEventDestroy(e));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
