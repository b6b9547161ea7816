// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// NVIDIA/warp#1418: a capture on stream a forks substream b; memory
// allocated on b and written by a kernel on b is freed in a's order (Warp
// added the free node with a's frontier; cudaFreeAsync on a makes the same
// node), which the kernel is not part of: at each launch the free may run
// before the kernel. b joins a only afterwards. The kernel is short, as
// graph memory stays mapped while the graph holds it.
#include "common.cuh"

int main() {
    sc::init("warp_captured_free_racy");
    cudaStream_t a = sc::make_stream(true);
    cudaStream_t b = sc::make_stream(true);
    cudaEvent_t fork = sc::make_event();
    cudaEvent_t join = sc::make_event();
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;

    SC_CHECK(cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal));
    SC_CHECK(cudaEventRecord(fork, a));
    SC_CHECK(cudaStreamWaitEvent(b, fork, 0));
    int* t = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&t, sc::kBytes, b));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, b>>>(t, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();
    // BUG: freed in a's order, which the kernel on b is not part of.
    SC_CHECK(cudaFreeAsync(t, a));
    SC_CHECK(cudaEventRecord(join, b));
    SC_CHECK(cudaStreamWaitEvent(a, join, 0));
    SC_CHECK(cudaStreamEndCapture(a, &graph));
    SC_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (int i = 0; i < 3; i++) {
        SC_CHECK(cudaGraphLaunch(exec, a));
    }
    SC_CHECK(cudaStreamSynchronize(a));

    SC_CHECK(cudaGraphExecDestroy(exec));
    SC_CHECK(cudaGraphDestroy(graph));
    SC_CHECK(cudaEventDestroy(fork));
    SC_CHECK(cudaEventDestroy(join));
    SC_CHECK(cudaStreamDestroy(a));
    SC_CHECK(cudaStreamDestroy(b));
    return sc::finish();
}
