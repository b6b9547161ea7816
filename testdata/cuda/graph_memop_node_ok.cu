// streamcheck-expect: stream-memory-op
// streamcheck-expect-count: 2
//
// graph_memop_node_racy with the fix its warning proposes: s2 also waits
// for an event recorded on s1 after the kernel, so the free is ordered
// after it whatever releases the wait. The wait at memory a graph writes
// and the graph's write are still warnings (not followed); no error.
#include "entry_points.cuh"

int main() {
    sc::init("graph_memop_node_ok");
    auto write32 = ep::driver<decltype(&cuStreamWriteValue32)>("cuStreamWriteValue32");
    auto wait32 = ep::driver<decltype(&cuStreamWaitValue32)>("cuStreamWaitValue32");
    auto add_memop_node = ep::driver<decltype(&cuGraphAddBatchMemOpNode)>("cuGraphAddBatchMemOpNode");
    auto current_ctx = ep::driver<decltype(&cuCtxGetCurrent)>("cuCtxGetCurrent");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaStream_t s3 = sc::make_stream(true);

    unsigned* flags = nullptr;
    SC_CHECK(cudaMalloc((void**)&flags, sizeof(unsigned)));
    SC_CHECK(cudaMemset(flags, 0, sizeof(unsigned)));
    SC_CHECK(cudaDeviceSynchronize());
    const CUdeviceptr flag = reinterpret_cast<CUdeviceptr>(flags);

    cudaGraph_t graph = nullptr;
    SC_CHECK(cudaGraphCreate(&graph, 0));
    CUstreamBatchMemOpParams op = {};
    op.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
    op.writeValue.address = flag;
    op.writeValue.value = 1;
    op.writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
    CUDA_BATCH_MEM_OP_NODE_PARAMS params = {};
    ep::driver_check(current_ctx(&params.ctx), "cuCtxGetCurrent");
    params.count = 1;
    params.paramArray = &op;
    CUgraphNode node = nullptr;
    ep::driver_check(add_memop_node(&node, graph, nullptr, 0, &params), "cuGraphAddBatchMemOpNode");
    cudaGraphExec_t exec = nullptr;
    SC_CHECK(cudaGraphInstantiate(&exec, graph, 0));

    int* x = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&x, sc::kBytes, s1));
    SC_CHECK(cudaStreamSynchronize(s1));
    SC_CHECK(cudaGraphLaunch(exec, s3));  // writes the flag at once
    sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(x, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();
    ep::driver_check(write32(s1, flag, 1, CU_STREAM_WRITE_VALUE_DEFAULT), "cuStreamWriteValue32");
    cudaEvent_t read = sc::make_event();
    SC_CHECK(cudaEventRecord(read, s1));
    ep::driver_check(wait32(s2, flag, 1, CU_STREAM_WAIT_VALUE_EQ), "cuStreamWaitValue32");
    SC_CHECK(cudaStreamWaitEvent(s2, read, 0));
    SC_CHECK(cudaFreeAsync(x, s2));  // after the kernel, through the event
    SC_CHECK(cudaEventDestroy(read));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaGraphExecDestroy(exec));
    SC_CHECK(cudaGraphDestroy(graph));
    SC_CHECK(cudaFree(flags));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    SC_CHECK(cudaStreamDestroy(s3));
    return sc::finish();
}
