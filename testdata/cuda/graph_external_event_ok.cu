// streamcheck-expect: clean
//
// Event record and wait nodes made by capturing with the external flags:
// graph A reads x and records `done` (cudaEventRecordExternal); s2 waits on
// `done` after A's launch, then frees x. Graph B, captured on s3, waits on
// `ready` (cudaEventWaitExternal), which s1 records after writing y, then
// reads y. Both orderings happen at each launch, so nothing in it is wrong.
#include "common.cuh"

int main() {
    sc::init("graph_external_event_ok");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaStream_t s3 = sc::make_stream(true);
    cudaEvent_t done = sc::make_event();
    cudaEvent_t ready = sc::make_event();

    int* x = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&x, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(x, sc::kN, sc::ms(0.1));
    SC_CHECK_LAUNCH();

    cudaGraph_t ga = nullptr, gb = nullptr;
    cudaGraphExec_t xa = nullptr, xb = nullptr;
    SC_CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeThreadLocal));
    sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(x, sc::kN, sc::ms(10));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecordWithFlags(done, s1, cudaEventRecordExternal));
    SC_CHECK(cudaStreamEndCapture(s1, &ga));
    SC_CHECK(cudaGraphInstantiate(&xa, ga, 0));

    int* y = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&y, sc::kBytes, s1));
    SC_CHECK(cudaStreamBeginCapture(s3, cudaStreamCaptureModeThreadLocal));
    SC_CHECK(cudaStreamWaitEvent(s3, ready, cudaEventWaitExternal));
    sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s3>>>(y, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaStreamEndCapture(s3, &gb));
    SC_CHECK(cudaGraphInstantiate(&xb, gb, 0));

    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(y, sc::kN, sc::ms(5));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecord(ready, s1));
    SC_CHECK(cudaGraphLaunch(xb, s3));  // waits for `ready`: y is allocated and written

    SC_CHECK(cudaGraphLaunch(xa, s1));  // reads x, then records `done`
    SC_CHECK(cudaStreamWaitEvent(s2, done, 0));
    SC_CHECK(cudaFreeAsync(x, s2));     // after the graph's read

    SC_CHECK(cudaStreamSynchronize(s3));
    SC_CHECK(cudaFreeAsync(y, s3));
    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaGraphExecDestroy(xa));
    SC_CHECK(cudaGraphExecDestroy(xb));
    SC_CHECK(cudaGraphDestroy(ga));
    SC_CHECK(cudaGraphDestroy(gb));
    SC_CHECK(cudaEventDestroy(done));
    SC_CHECK(cudaEventDestroy(ready));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    SC_CHECK(cudaStreamDestroy(s3));
    return sc::finish();
}
