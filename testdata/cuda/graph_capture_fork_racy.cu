// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// The twin of graph_capture_fork_ok with a race inside the graph: s1 frees
// the graph buffer before it waits for s2's join event, so the graph's free
// node does not depend on s2's reading kernel. Every launch of the graph may
// free the buffer while the kernel reads it, however the launches themselves
// are ordered. (CUDA accepts the capture: s2 is joined back before its end.)
#include "common.cuh"

int main() {
    sc::init("graph_capture_fork_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t fork = sc::make_event();
    cudaEvent_t join = sc::make_event();

    int* eager = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&eager, sc::kBytes, s1));
    SC_CHECK(cudaStreamSynchronize(s1));

    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    SC_CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeThreadLocal));
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, sc::kN, sc::ms(0.5));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecord(fork, s1));
    SC_CHECK(cudaStreamWaitEvent(s2, fork, 0));  // s2 joins the capture
    sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(p, sc::kN, sc::ms(0.5));
    SC_CHECK_LAUNCH();
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(eager, sc::kN, sc::ms(0.5));
    SC_CHECK_LAUNCH();
    // BUG: the free is captured before s1 waits for s2's read.
    SC_CHECK(cudaFreeAsync(p, s1));
    SC_CHECK(cudaEventRecord(join, s2));
    SC_CHECK(cudaStreamWaitEvent(s1, join, 0));
    SC_CHECK(cudaStreamEndCapture(s1, &graph));

    SC_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (int i = 0; i < 3; ++i) {
        SC_CHECK(cudaGraphLaunch(exec, s1));
    }
    SC_CHECK(cudaStreamSynchronize(s1));

    SC_CHECK(cudaGraphExecDestroy(exec));
    SC_CHECK(cudaGraphDestroy(graph));
    SC_CHECK(cudaFreeAsync(eager, s1));
    SC_CHECK(cudaStreamSynchronize(s1));

    SC_CHECK(cudaEventDestroy(fork));
    SC_CHECK(cudaEventDestroy(join));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
