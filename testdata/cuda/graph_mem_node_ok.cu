// streamcheck-expect: clean
//
// A graph built with memory allocation nodes (cudaGraphAddMemAllocNode, and
// cudaGraphAddNode of that type) allocates at each launch and leaves the
// memory to the program: a kernel on the launching stream uses it, and
// cudaFreeAsync frees it before the next launch. Three launches, each
// followed by a free of the same addresses: none is an invalid free.
#include "common.cuh"

int main() {
    sc::init("graph_mem_node_ok");
    cudaStream_t s1 = sc::make_stream(true);

    cudaGraph_t graph = nullptr;
    SC_CHECK(cudaGraphCreate(&graph, 0));
    cudaMemAllocNodeParams a = {};
    a.poolProps.allocType = cudaMemAllocationTypePinned;
    a.poolProps.location.type = cudaMemLocationTypeDevice;
    a.poolProps.location.id = 0;
    a.bytesize = sc::kBytes;
    cudaGraphNode_t node = nullptr;
    SC_CHECK(cudaGraphAddMemAllocNode(&node, graph, nullptr, 0, &a));
    cudaGraphNodeParams b = {};
    b.type = cudaGraphNodeTypeMemAlloc;
    b.alloc.poolProps = a.poolProps;
    b.alloc.bytesize = a.bytesize;
    cudaGraphNode_t node2 = nullptr;
    SC_CHECK(cudaGraphAddNode(&node2, graph, nullptr, nullptr, 0, &b));
    int* p = static_cast<int*>(a.dptr);
    int* q = static_cast<int*>(b.alloc.dptr);
    cudaGraphExec_t exec = nullptr;
    SC_CHECK(cudaGraphInstantiate(&exec, graph, 0));

    for (int i = 0; i < 3; i++) {
        SC_CHECK(cudaGraphLaunch(exec, s1));
        sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, sc::kN, sc::ms(1));
        SC_CHECK_LAUNCH();
        sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(q, sc::kN, sc::ms(1));
        SC_CHECK_LAUNCH();
        SC_CHECK(cudaFreeAsync(p, s1));
        SC_CHECK(cudaFreeAsync(q, s1));
    }

    SC_CHECK(cudaStreamSynchronize(s1));
    SC_CHECK(cudaGraphExecDestroy(exec));
    SC_CHECK(cudaGraphDestroy(graph));
    SC_CHECK(cudaStreamDestroy(s1));
    return sc::finish();
}
