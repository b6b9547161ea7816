// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
// streamcheck-expect: wait-unrecorded-event
//
// As graph_event_node_ok's graph A, but the event record node is added
// after cudaGraphInstantiate, which copied the graph: the executable graph
// has no record node, its launch never records `done`, and s2's wait on
// `done` orders nothing (an event never recorded). s2 frees x while the
// launch's 10 ms read of x runs.
#include "common.cuh"

int main() {
    sc::init("graph_event_node_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t done = sc::make_event();

    int* x = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&x, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(x, sc::kN, sc::ms(0.1));
    SC_CHECK_LAUNCH();

    cudaGraph_t ga = nullptr;
    cudaGraphExec_t xa = nullptr;
    SC_CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeThreadLocal));
    sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(x, sc::kN, sc::ms(10));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaStreamEndCapture(s1, &ga));
    SC_CHECK(cudaGraphInstantiate(&xa, ga, 0));  // before the record node: xa lacks it
    cudaGraphNode_t kernel = nullptr, record = nullptr;
    size_t n = 1;
    SC_CHECK(cudaGraphGetNodes(ga, &kernel, &n));
    SC_CHECK(cudaGraphAddEventRecordNode(&record, ga, &kernel, 1, done));

    SC_CHECK(cudaGraphLaunch(xa, s1));  // reads x; records nothing
    cudaError_t q = cudaEventQuery(done);
    printf("STREAMCHECK_NOTE cudaEventQuery(done) after the launch: %s (never recorded: success)\n",
           cudaGetErrorName(q));
    SC_CHECK(cudaStreamWaitEvent(s2, done, 0));
    SC_CHECK(cudaFreeAsync(x, s2));     // races the graph's read

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaGraphExecDestroy(xa));
    SC_CHECK(cudaGraphDestroy(ga));
    SC_CHECK(cudaEventDestroy(done));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
