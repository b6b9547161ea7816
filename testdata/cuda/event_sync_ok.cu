// streamcheck-expect: clean
//
// The event is recorded on s1 after the kernel; cudaEventSynchronize orders
// the host after it, so the free on another stream is safe.
#include "common.cuh"

int main() {
    sc::init("event_sync_ok");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t e = sc::make_event();

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecord(e, s1));

    SC_CHECK(cudaEventSynchronize(e));
    SC_CHECK(cudaFreeAsync(p, s2));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaEventDestroy(e));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
