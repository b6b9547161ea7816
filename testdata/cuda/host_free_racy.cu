// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// openxla/xla#46093 (fixed by openxla/xla#47040): pinned host memory freed
// while GPU work on it may still run. cudaFreeHost promises no
// synchronization. A kernel on s uses the pinned buffer h (through its
// unified address), tells the host it is done touching it, and spins for
// 20 ms; the host frees h without synchronizing s. (XLA's own form, a
// cuMemsetD32Async pending on the buffer, is the golden
// host_free_memset_racy: a set still pending on freed pages could fault
// the GPU, so this program lets the kernel finish touching first.)
#include "common.cuh"

int main() {
    sc::init("host_free_racy");
    cudaStream_t s = sc::make_stream(true);
    int* h = nullptr;
    SC_CHECK(cudaHostAlloc((void**)&h, sc::kBytes, cudaHostAllocMapped));
    sc::HostFlag touched = sc::make_flag();
    sc_touch_signal_spin<<<1, sc::kThreads, 0, s>>>(h, sc::kN, touched.device, sc::ms(20));
    SC_CHECK_LAUNCH();
    sc::wait_flag(touched);

    // BUG: the kernel on s may still run; nothing orders it before the free.
    SC_CHECK(cudaFreeHost(h));

    SC_CHECK(cudaStreamSynchronize(s));
    sc::free_flag(touched);
    SC_CHECK(cudaStreamDestroy(s));
    return sc::finish();
}
