// streamcheck-expect: clean
//
// Capture once, re-point per call: a graph captured from a kernel reading
// x is instantiated, then its kernel node is given y instead with
// cudaGraphExecKernelNodeSetParams, and x is freed before the replay. The
// replay reads only y, so nothing in it is wrong. streamcheck forgets what
// the capture used once the executable graph's node changes, instead of
// reporting the replay as a use of x after its free.
#include "common.cuh"

int main() {
    sc::init("graph_exec_setparams_ok");
    cudaStream_t s = sc::make_stream(true);

    int* x = nullptr;
    int* y = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&x, sc::kBytes, s));
    SC_CHECK(cudaMallocAsync((void**)&y, sc::kBytes, s));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s>>>(x, sc::kN, sc::ms(0.1));
    SC_CHECK_LAUNCH();
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s>>>(y, sc::kN, sc::ms(0.1));
    SC_CHECK_LAUNCH();

    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    SC_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s>>>(x, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaStreamEndCapture(s, &graph));
    SC_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    SC_CHECK(cudaGraphLaunch(exec, s));

    // Re-point the kernel node from x to y.
    cudaGraphNode_t node = nullptr;
    size_t n = 1;
    SC_CHECK(cudaGraphGetNodes(graph, &node, &n));
    cudaKernelNodeParams kp;
    SC_CHECK(cudaGraphKernelNodeGetParams(node, &kp));
    int* data = y;
    int count = sc::kN;
    long long cycles = sc::ms(1);
    void* args[] = {&data, &count, &cycles};
    kp.kernelParams = args;
    SC_CHECK(cudaGraphExecKernelNodeSetParams(exec, node, &kp));

    SC_CHECK(cudaFreeAsync(x, s));  // the replay below no longer reads x
    SC_CHECK(cudaGraphLaunch(exec, s));
    SC_CHECK(cudaFreeAsync(y, s));
    SC_CHECK(cudaStreamSynchronize(s));

    SC_CHECK(cudaGraphExecDestroy(exec));
    SC_CHECK(cudaGraphDestroy(graph));
    SC_CHECK(cudaStreamDestroy(s));
    return sc::finish();
}
