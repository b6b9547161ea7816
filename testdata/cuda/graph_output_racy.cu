// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// The twin of graph_output_ok: s2 reads the graph's output after each
// launch (20 ms), but the next launch on s1 does not wait for the read. A
// graph instantiated with cudaGraphInstantiateFlagAutoFreeOnLaunch frees
// the last launch's output when it is launched again, so the relaunch may
// free the output while s2 still reads it (reported once, at the relaunch
// site, for both relaunches).
#include "common.cuh"

int main() {
    sc::init("graph_output_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t done = sc::make_event();
    cudaEvent_t read = sc::make_event();

    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    int* out = nullptr;
    SC_CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeThreadLocal));
    SC_CHECK(cudaMallocAsync((void**)&out, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(out, sc::kN, sc::ms(0.5));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaStreamEndCapture(s1, &graph));
    SC_CHECK(cudaGraphInstantiateWithFlags(&exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch));

    for (int i = 0; i < 3; ++i) {
        SC_CHECK(cudaGraphLaunch(exec, s1));
        SC_CHECK(cudaEventRecord(done, s1));
        SC_CHECK(cudaStreamWaitEvent(s2, done, 0));
        sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(out, sc::kN, sc::ms(20));
        SC_CHECK_LAUNCH();
        SC_CHECK(cudaEventRecord(read, s2));
        // BUG: the next launch frees out without waiting for the read.
    }
    SC_CHECK(cudaStreamWaitEvent(s1, read, 0));
    SC_CHECK(cudaFreeAsync(out, s1));
    SC_CHECK(cudaStreamSynchronize(s1));

    SC_CHECK(cudaGraphExecDestroy(exec));
    SC_CHECK(cudaGraphDestroy(graph));
    SC_CHECK(cudaEventDestroy(done));
    SC_CHECK(cudaEventDestroy(read));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
