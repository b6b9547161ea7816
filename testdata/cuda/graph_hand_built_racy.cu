// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
// streamcheck-expect: use-before-alloc
//
// Graphs built node by node, not captured. Graph A has one kernel node
// (cudaGraphAddKernelNode) that reads x for 10 ms; after launching it on s1,
// s2 frees x without waiting for the launch. Graph B sets y
// (cudaGraphAddMemsetNode) and then copies into it from pinned host memory
// (cudaGraphAddMemcpyNode1D); s2 allocates y behind a 20 ms spin, and B is
// launched on s3 without waiting for the allocation.
#include "common.cuh"

int main() {
    sc::init("graph_hand_built_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaStream_t s3 = sc::make_stream(true);
    int n = sc::kN;
    long long cycles = sc::ms(10);

    int* x = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&x, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(x, sc::kN, sc::ms(0.1));
    SC_CHECK_LAUNCH();

    // y is allocated late on s2, while x is live: it cannot take x's memory.
    sc_spin<<<1, 1, 0, s2>>>(sc::ms(20));
    SC_CHECK_LAUNCH();
    int* y = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&y, sc::kBytes, s2));

    cudaGraph_t ga = nullptr, gb = nullptr;
    cudaGraphExec_t xa = nullptr, xb = nullptr;
    cudaGraphNode_t read = nullptr, set = nullptr, copy = nullptr;
    SC_CHECK(cudaGraphCreate(&ga, 0));
    void* args[] = {&x, &n, &cycles};
    cudaKernelNodeParams kp = {};
    kp.func = (void*)sc_read_spin;
    kp.gridDim = dim3(sc::kBlocks);
    kp.blockDim = dim3(sc::kThreads);
    kp.kernelParams = args;
    SC_CHECK(cudaGraphAddKernelNode(&read, ga, nullptr, 0, &kp));
    SC_CHECK(cudaGraphInstantiate(&xa, ga, 0));
    SC_CHECK(cudaGraphLaunch(xa, s1));  // reads x for 10 ms
    SC_CHECK(cudaFreeAsync(x, s2));     // races the graph's read

    int* host = nullptr;
    SC_CHECK(cudaMallocHost((void**)&host, sc::kBytes));
    SC_CHECK(cudaGraphCreate(&gb, 0));
    cudaMemsetParams mp = {};
    mp.dst = y;
    mp.value = 0;
    mp.elementSize = sizeof(int);
    mp.width = sc::kN;
    mp.height = 1;
    SC_CHECK(cudaGraphAddMemsetNode(&set, gb, nullptr, 0, &mp));
    SC_CHECK(cudaGraphAddMemcpyNode1D(&copy, gb, &set, 1, y, host, sc::kBytes, cudaMemcpyHostToDevice));
    SC_CHECK(cudaGraphInstantiate(&xb, gb, 0));
    SC_CHECK(cudaGraphLaunch(xb, s3));  // before y's allocation on s2

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFreeAsync(y, s2));
    SC_CHECK(cudaStreamSynchronize(s2));
    SC_CHECK(cudaFreeHost(host));
    SC_CHECK(cudaGraphExecDestroy(xa));
    SC_CHECK(cudaGraphExecDestroy(xb));
    SC_CHECK(cudaGraphDestroy(ga));
    SC_CHECK(cudaGraphDestroy(gb));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    SC_CHECK(cudaStreamDestroy(s3));
    return sc::finish();
}
