// streamcheck-expect: clean
//
// Graph A is captured (a 10 ms read of x) and given an event record node
// of `done` after its kernel. Its clone (cudaGraphClone) has the same
// nodes: the clone's launch on s1 records `done` after reading x, and s2
// frees x after waiting on `done`. Graph B embeds A as a child graph node;
// its launch on s3 reads y, and s2 frees y after waiting for it.
#include "common.cuh"

int main() {
    sc::init("graph_clone_ok");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaStream_t s3 = sc::make_stream(true);
    cudaEvent_t written = sc::make_event();
    cudaEvent_t done = sc::make_event();
    cudaEvent_t b_done = sc::make_event();

    int* x = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&x, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(x, sc::kN, sc::ms(0.1));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecord(written, s1));
    SC_CHECK(cudaStreamWaitEvent(s2, written, 0));
    SC_CHECK(cudaStreamWaitEvent(s3, written, 0));

    cudaGraph_t ga = nullptr, clone = nullptr, gb = nullptr;
    cudaGraphExec_t xc = nullptr, xb = nullptr;
    SC_CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeThreadLocal));
    sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(x, sc::kN, sc::ms(10));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaStreamEndCapture(s1, &ga));
    cudaGraphNode_t kernel = nullptr, record = nullptr, child = nullptr;
    size_t n = 1;
    SC_CHECK(cudaGraphGetNodes(ga, &kernel, &n));
    SC_CHECK(cudaGraphAddEventRecordNode(&record, ga, &kernel, 1, done));
    SC_CHECK(cudaGraphClone(&clone, ga));
    SC_CHECK(cudaGraphInstantiate(&xc, clone, 0));

    SC_CHECK(cudaGraphLaunch(xc, s1));  // reads x, then records `done`
    SC_CHECK(cudaStreamWaitEvent(s2, done, 0));
    SC_CHECK(cudaFreeAsync(x, s2));     // after the clone's read

    // B embeds a captured graph that reads y.
    int* y = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&y, sc::kBytes, s3));
    cudaGraph_t gy = nullptr;
    SC_CHECK(cudaStreamBeginCapture(s3, cudaStreamCaptureModeThreadLocal));
    sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s3>>>(y, sc::kN, sc::ms(5));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaStreamEndCapture(s3, &gy));
    SC_CHECK(cudaGraphCreate(&gb, 0));
    SC_CHECK(cudaGraphAddChildGraphNode(&child, gb, nullptr, 0, gy));
    SC_CHECK(cudaGraphInstantiate(&xb, gb, 0));
    SC_CHECK(cudaGraphLaunch(xb, s3));  // reads y
    SC_CHECK(cudaEventRecord(b_done, s3));
    SC_CHECK(cudaStreamWaitEvent(s2, b_done, 0));
    SC_CHECK(cudaFreeAsync(y, s2));     // after B's read

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaGraphExecDestroy(xc));
    SC_CHECK(cudaGraphExecDestroy(xb));
    SC_CHECK(cudaGraphDestroy(clone));
    SC_CHECK(cudaGraphDestroy(ga));
    SC_CHECK(cudaGraphDestroy(gb));
    SC_CHECK(cudaGraphDestroy(gy));
    SC_CHECK(cudaEventDestroy(written));
    SC_CHECK(cudaEventDestroy(done));
    SC_CHECK(cudaEventDestroy(b_done));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    SC_CHECK(cudaStreamDestroy(s3));
    return sc::finish();
}
