// streamcheck-expect: clean
//
// Stream capture of allocate / kernel / free on one stream, instantiated and
// launched three times. The captured kernel also uses an eagerly allocated
// buffer that is freed after the launches completed. Must not crash; nothing
// in it is wrong.
#include "common.cuh"

int main() {
    sc::init("graph_capture_ok");
    cudaStream_t s = sc::make_stream(true);

    int* eager = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&eager, sc::kBytes, s));
    SC_CHECK(cudaStreamSynchronize(s));

    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    SC_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s));  // becomes a graph alloc node
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s>>>(p, sc::kN, sc::ms(0.5));
    SC_CHECK_LAUNCH();
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s>>>(eager, sc::kN, sc::ms(0.5));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaFreeAsync(p, s));  // becomes a graph free node
    SC_CHECK(cudaStreamEndCapture(s, &graph));

    SC_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (int i = 0; i < 3; ++i) {
        SC_CHECK(cudaGraphLaunch(exec, s));
    }
    SC_CHECK(cudaStreamSynchronize(s));

    SC_CHECK(cudaGraphExecDestroy(exec));
    SC_CHECK(cudaGraphDestroy(graph));

    // Ordinary stream-ordered work after the graph still tracks normally.
    SC_CHECK(cudaFreeAsync(eager, s));
    int* q = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&q, sc::kBytes, s));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s>>>(q, sc::kN, sc::ms(0.5));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaFreeAsync(q, s));
    SC_CHECK(cudaStreamSynchronize(s));

    SC_CHECK(cudaStreamDestroy(s));
    return sc::finish();
}
