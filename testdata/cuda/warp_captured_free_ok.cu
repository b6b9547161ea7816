// streamcheck-expect: clean
//
// The fix of NVIDIA/warp#1418 (NVIDIA/warp#1419): the free of memory
// allocated on the forked substream b is in b's order, after the kernel;
// a second buffer is freed on a after a joins b.
#include "common.cuh"

int main() {
    sc::init("warp_captured_free_ok");
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
    SC_CHECK(cudaFreeAsync(t, b));
    int* u = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&u, sc::kBytes, b));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, b>>>(u, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecord(join, b));
    SC_CHECK(cudaStreamWaitEvent(a, join, 0));
    SC_CHECK(cudaFreeAsync(u, a));
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
