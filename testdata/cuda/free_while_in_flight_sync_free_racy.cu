// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// cudaFree (the synchronous free) of cudaMallocAsync memory while a kernel
// that uses it is still running on s1. The allocation itself is ordered before
// the host by a stream synchronize, so only the in-flight use is wrong.
// The kernel touches the buffer first and signals the host through a mapped
// pinned flag; the host frees only after that signal (invisible to CUDA), so
// the free lands while the kernel still spins, but cannot fault it.
#include "common.cuh"

int main() {
    sc::init("free_while_in_flight_sync_free_racy");
    cudaStream_t s1 = sc::make_stream(true);
    sc::HostFlag flag = sc::make_flag();

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    SC_CHECK(cudaStreamSynchronize(s1));  // the allocation is complete before the host goes on

    sc_touch_signal_spin<<<1, sc::kThreads, 0, s1>>>(p, sc::kN, flag.device, sc::ms(30));
    SC_CHECK_LAUNCH();
    sc::wait_flag(flag);

    // BUG: the kernel on s1 is still running; cudaFree is not ordered after it.
    SC_CHECK(cudaFree(p));

    SC_CHECK(cudaDeviceSynchronize());
    sc::free_flag(flag);
    SC_CHECK(cudaStreamDestroy(s1));
    return sc::finish();
}
