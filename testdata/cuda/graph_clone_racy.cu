// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// Graph A is captured (a 10 ms read of x). Graph B embeds it as a child
// graph node (cudaGraphAddChildGraphNode copies A into B). B is launched on
// s1 after s2 has waited for x's write; s2 then frees x without waiting for
// B's launch, whose copy of A still reads x.
#include "common.cuh"

int main() {
    sc::init("graph_clone_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t written = sc::make_event();

    int* x = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&x, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(x, sc::kN, sc::ms(0.1));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecord(written, s1));
    SC_CHECK(cudaStreamWaitEvent(s2, written, 0));  // the write is ordered before the free

    cudaGraph_t ga = nullptr, gb = nullptr;
    cudaGraphExec_t xb = nullptr;
    SC_CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeThreadLocal));
    sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(x, sc::kN, sc::ms(10));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaStreamEndCapture(s1, &ga));
    SC_CHECK(cudaGraphCreate(&gb, 0));
    cudaGraphNode_t child = nullptr;
    SC_CHECK(cudaGraphAddChildGraphNode(&child, gb, nullptr, 0, ga));
    SC_CHECK(cudaGraphInstantiate(&xb, gb, 0));

    SC_CHECK(cudaGraphLaunch(xb, s1));  // A's copy reads x for 10 ms
    SC_CHECK(cudaFreeAsync(x, s2));     // races it

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaGraphExecDestroy(xb));
    SC_CHECK(cudaGraphDestroy(gb));
    SC_CHECK(cudaGraphDestroy(ga));
    SC_CHECK(cudaEventDestroy(written));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
