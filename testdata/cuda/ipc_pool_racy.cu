// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// Two processes share a pool (ipc_pool.cuh). The child reads the imported
// pointer on stream s2 with a long kernel and frees it on its other stream
// s1 without waiting for s2: the free may run while the kernel still uses
// the memory, a bug within the child alone. The kernel touches the buffer
// first and then only spins, and the host waits for that touch (invisible
// to streamcheck), so the early free never unmaps memory being read.
#include "ipc_pool.cuh"

int main() {
    return sc_ipc::run("ipc_pool_racy", [](int* q, cudaStream_t s1) {
        cudaStream_t s2 = sc::make_stream(true);
        cudaEvent_t imported = sc::make_event();
        SC_CHECK(cudaEventRecord(imported, s1)); // s2 also follows the parent's write
        SC_CHECK(cudaStreamWaitEvent(s2, imported, 0));
        sc::HostFlag touched = sc::make_flag();
        sc_touch_signal_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(q, sc::kN, touched.device, sc::ms(20));
        SC_CHECK_LAUNCH();
        sc::wait_flag(touched);
        SC_CHECK(cudaFreeAsync(q, s1)); // racy: s1 does not wait for the kernel on s2
        SC_CHECK(cudaStreamSynchronize(s1));
        SC_CHECK(cudaStreamSynchronize(s2));
        sc::free_flag(touched);
        SC_CHECK(cudaEventDestroy(imported));
        SC_CHECK(cudaStreamDestroy(s2));
    });
}
