// streamcheck-expect: clean
//
// Event nodes added by hand: graph A is captured (a 10 ms read of x) and
// then given an event record node after its kernel
// (cudaGraphAddEventRecordNode, of `first`, then pointed at `done` with
// cudaGraphEventRecordNodeSetEvent) before it is instantiated; s2 waits on
// `done` after A's launch, then frees x. Graph B is built node by node
// with one event wait node (cudaGraphAddEventWaitNode, of `first`), and
// its executable graph's node is pointed at `ready`
// (cudaGraphExecEventWaitNodeSetEvent), which s1 records after allocating
// and writing y; s3 records `fin` after B's launch, and s2 reads y after
// waiting on `fin`. Both orderings happen at each launch, so nothing in it
// is wrong.
#include "common.cuh"

int main() {
    sc::init("graph_event_node_ok");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaStream_t s3 = sc::make_stream(true);
    cudaEvent_t done = sc::make_event();
    cudaEvent_t ready = sc::make_event();
    cudaEvent_t fin = sc::make_event();
    cudaEvent_t first = sc::make_event();  // never recorded

    int* x = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&x, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(x, sc::kN, sc::ms(0.1));
    SC_CHECK_LAUNCH();

    cudaGraph_t ga = nullptr, gb = nullptr;
    cudaGraphExec_t xa = nullptr, xb = nullptr;
    SC_CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeThreadLocal));
    sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(x, sc::kN, sc::ms(10));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaStreamEndCapture(s1, &ga));
    cudaGraphNode_t kernel = nullptr, record = nullptr, wait = nullptr;
    size_t n = 1;
    SC_CHECK(cudaGraphGetNodes(ga, &kernel, &n));
    SC_CHECK(cudaGraphAddEventRecordNode(&record, ga, &kernel, 1, first));
    SC_CHECK(cudaGraphEventRecordNodeSetEvent(record, done));
    SC_CHECK(cudaGraphInstantiate(&xa, ga, 0));  // after the record node: xa has it

    SC_CHECK(cudaGraphCreate(&gb, 0));
    SC_CHECK(cudaGraphAddEventWaitNode(&wait, gb, nullptr, 0, first));
    SC_CHECK(cudaGraphInstantiate(&xb, gb, 0));
    SC_CHECK(cudaGraphExecEventWaitNodeSetEvent(xb, wait, ready));

    int* y = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&y, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(y, sc::kN, sc::ms(5));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecord(ready, s1));
    SC_CHECK(cudaGraphLaunch(xb, s3));  // waits for `ready`: y is allocated and written
    SC_CHECK(cudaEventRecord(fin, s3));
    SC_CHECK(cudaStreamWaitEvent(s2, fin, 0));
    sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(y, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();

    SC_CHECK(cudaGraphLaunch(xa, s1));  // reads x, then records `done`
    SC_CHECK(cudaStreamWaitEvent(s2, done, 0));
    SC_CHECK(cudaFreeAsync(x, s2));     // after the graph's read

    SC_CHECK(cudaFreeAsync(y, s2));     // after s2's own read of y
    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaGraphExecDestroy(xa));
    SC_CHECK(cudaGraphExecDestroy(xb));
    SC_CHECK(cudaGraphDestroy(ga));
    SC_CHECK(cudaGraphDestroy(gb));
    SC_CHECK(cudaEventDestroy(done));
    SC_CHECK(cudaEventDestroy(ready));
    SC_CHECK(cudaEventDestroy(fin));
    SC_CHECK(cudaEventDestroy(first));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    SC_CHECK(cudaStreamDestroy(s3));
    return sc::finish();
}
