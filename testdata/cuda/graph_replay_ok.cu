// streamcheck-expect: clean
//
// graph_replay_racy done right: s1 waits for an event recorded on s2 after
// the replays before it frees x. The executable graph is also updated
// (cudaGraphExecUpdate) to a second captured graph that reads y, replayed,
// and y is freed on s2 after it in stream order. Nothing in it is wrong.
#include "common.cuh"

int main() {
    sc::init("graph_replay_ok");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t ready = sc::make_event();
    cudaEvent_t done = sc::make_event();

    int* x = nullptr;
    int* y = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&x, sc::kBytes, s1));
    SC_CHECK(cudaMallocAsync((void**)&y, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(x, sc::kN, sc::ms(0.1));
    SC_CHECK_LAUNCH();
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(y, sc::kN, sc::ms(0.1));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecord(ready, s1));

    cudaGraph_t graph = nullptr, graph2 = nullptr;
    cudaGraphExec_t exec = nullptr;
    SC_CHECK(cudaStreamBeginCapture(s2, cudaStreamCaptureModeThreadLocal));
    sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(x, sc::kN, sc::ms(5));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaStreamEndCapture(s2, &graph));
    SC_CHECK(cudaGraphInstantiateWithFlags(&exec, graph, 0));

    SC_CHECK(cudaStreamWaitEvent(s2, ready, 0));
    for (int i = 0; i < 3; ++i) SC_CHECK(cudaGraphLaunch(exec, s2));
    SC_CHECK(cudaEventRecord(done, s2));
    SC_CHECK(cudaStreamWaitEvent(s1, done, 0));
    SC_CHECK(cudaFreeAsync(x, s1));  // after the replays

    // The same topology reading y instead: update the executable graph.
    SC_CHECK(cudaStreamBeginCapture(s2, cudaStreamCaptureModeThreadLocal));
    sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(y, sc::kN, sc::ms(5));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaStreamEndCapture(s2, &graph2));
    cudaGraphExecUpdateResultInfo info;
    SC_CHECK(cudaGraphExecUpdate(exec, graph2, &info));
    SC_CHECK(cudaGraphLaunch(exec, s2));
    SC_CHECK(cudaFreeAsync(y, s2));  // stream order: after the replay

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaGraphExecDestroy(exec));
    SC_CHECK(cudaGraphDestroy(graph));
    SC_CHECK(cudaGraphDestroy(graph2));
    SC_CHECK(cudaEventDestroy(ready));
    SC_CHECK(cudaEventDestroy(done));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
