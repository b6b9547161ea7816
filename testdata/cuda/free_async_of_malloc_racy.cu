// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// cudaFreeAsync on s1 of cudaMalloc memory that a kernel on s2 is still
// using. The kernel touches the buffer first and signals the host through a
// mapped pinned flag; the host issues the free only after that signal, so the
// free is in flight with the kernel but cannot fault it.
#include "common.cuh"

int main() {
    sc::init("free_async_of_malloc_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    sc::HostFlag flag = sc::make_flag();

    int* p = nullptr;
    SC_CHECK(cudaMalloc((void**)&p, sc::kBytes));

    sc_touch_signal_spin<<<1, sc::kThreads, 0, s2>>>(p, sc::kN, flag.device, sc::ms(30));
    SC_CHECK_LAUNCH();
    sc::wait_flag(flag);

    // BUG: s1 is not ordered after the kernel on s2.
    SC_CHECK(cudaFreeAsync(p, s1));

    SC_CHECK(cudaDeviceSynchronize());
    sc::free_flag(flag);
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
