// Shared body of graph_conditional_racy.cu and graph_conditional_ok.cu:
// graphs with a conditional node (CUDA 12.4 and later) whose body reads a
// buffer, freed on another stream after the graph's launch.
//
// Two ways to build them:
//  - by hand: cudaGraphCreate, a conditional "if" node (cudaGraphAddNode),
//    its body filled by a capture into it (cudaStreamBeginCaptureToGraph);
//  - during a capture, as NVIDIA NeMo's decoding loops do: the graph being
//    captured (cudaStreamGetCaptureInfo) is given the conditional node, and
//    its body is captured on another stream.
// The condition's default value is 1 at every launch
// (cudaGraphCondAssignDefault), so the body runs.
#pragma once

#include "common.cuh"

namespace cond {

// Adds an "if" node to graph and returns its body graph.
inline cudaGraph_t add_if(cudaGraph_t graph) {
    cudaGraphConditionalHandle handle = 0;
    SC_CHECK(cudaGraphConditionalHandleCreate(&handle, graph, 1, cudaGraphCondAssignDefault));
    cudaGraphNodeParams params = {};
    params.type = cudaGraphNodeTypeConditional;
    params.conditional.handle = handle;
    params.conditional.type = cudaGraphCondTypeIf;
    params.conditional.size = 1;
    cudaGraphNode_t node = nullptr;
    SC_CHECK(cudaGraphAddNode(&node, graph, nullptr, nullptr, 0, &params));
    return params.conditional.phGraph_out ? params.conditional.phGraph_out[0] : nullptr;
}

// Captures into body, on stream s, a 20 ms kernel reading data.
inline void fill_body(cudaGraph_t body, cudaStream_t s, int* data) {
    SC_CHECK(cudaStreamBeginCaptureToGraph(s, body, nullptr, nullptr, 0, cudaStreamCaptureModeRelaxed));
    sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s>>>(data, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();
    cudaGraph_t same = nullptr;
    SC_CHECK(cudaStreamEndCapture(s, &same));
}

// Runs the program. With handoff, the stream that frees each buffer waits
// for an event recorded after the launch (correct); without, it does not.
inline int run(const char* name, bool handoff) {
    sc::init(name);
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaStream_t s3 = sc::make_stream(true);
    int *x = nullptr, *y = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&x, sc::kBytes, s1));
    SC_CHECK(cudaMallocAsync((void**)&y, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(x, sc::kN, sc::ms(0.1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(y, sc::kN, sc::ms(0.1));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaStreamSynchronize(s1));

    // By hand: the body reads x.
    cudaGraph_t hand = nullptr;
    SC_CHECK(cudaGraphCreate(&hand, 0));
    fill_body(add_if(hand), s2, x);

    // During a capture on s1: the body, captured on s2, reads y.
    SC_CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeRelaxed));
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    unsigned long long id = 0;
    cudaGraph_t building = nullptr;
    SC_CHECK(cudaStreamGetCaptureInfo(s1, &status, &id, &building));
    fill_body(add_if(building), s2, y);
    sc_spin<<<1, 1, 0, s1>>>(sc::ms(0.1));
    SC_CHECK_LAUNCH();
    cudaGraph_t captured = nullptr;
    SC_CHECK(cudaStreamEndCapture(s1, &captured));

    cudaGraphExec_t hand_exec = nullptr, captured_exec = nullptr;
    SC_CHECK(cudaGraphInstantiate(&hand_exec, hand, 0));
    SC_CHECK(cudaGraphInstantiate(&captured_exec, captured, 0));
    SC_CHECK(cudaGraphLaunch(hand_exec, s1));
    SC_CHECK(cudaGraphLaunch(captured_exec, s1));
    if (handoff) {
        cudaEvent_t launched = sc::make_event();
        SC_CHECK(cudaEventRecord(launched, s1));
        SC_CHECK(cudaStreamWaitEvent(s3, launched, 0));
        SC_CHECK(cudaEventDestroy(launched));
    }
    SC_CHECK(cudaFreeAsync(x, s3));  // racy: while the first graph's body reads x
    SC_CHECK(cudaFreeAsync(y, s3));  // racy: while the second graph's body reads y

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaGraphExecDestroy(hand_exec));
    SC_CHECK(cudaGraphExecDestroy(captured_exec));
    SC_CHECK(cudaGraphDestroy(hand));
    SC_CHECK(cudaGraphDestroy(captured));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    SC_CHECK(cudaStreamDestroy(s3));
    return sc::finish();
}

}  // namespace cond
