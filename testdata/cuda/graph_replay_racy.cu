// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// A graph captured on s2 reads x, which s1 allocated and initialized. The
// graph is replayed on s2 (ordered after x's allocation through an event),
// then x is freed on s1 with no event from s2: the free races with the
// replay still reading x. The graph launch is the use: streamcheck checks
// each launch as the uses of the work captured into its graph.
#include "common.cuh"

int main() {
    sc::init("graph_replay_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t ready = sc::make_event();

    int* x = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&x, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(x, sc::kN, sc::ms(0.1));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecord(ready, s1));

    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    SC_CHECK(cudaStreamBeginCapture(s2, cudaStreamCaptureModeThreadLocal));
    sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(x, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaStreamEndCapture(s2, &graph));
    SC_CHECK(cudaGraphInstantiate(&exec, graph, 0));

    SC_CHECK(cudaStreamWaitEvent(s2, ready, 0));
    SC_CHECK(cudaGraphLaunch(exec, s2));  // reads x for about 20 ms
    SC_CHECK(cudaFreeAsync(x, s1));       // BUG: s1 never waits for the replay on s2

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaGraphExecDestroy(exec));
    SC_CHECK(cudaGraphDestroy(graph));
    SC_CHECK(cudaEventDestroy(ready));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
