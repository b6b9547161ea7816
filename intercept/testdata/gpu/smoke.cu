// smoke.cu: one of each CUDA call the shim records, for checking the shim
// on a real GPU (see run.sh). Build with nvcc (static cudart, as nvcc does
// by default), also with --default-stream per-thread.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include <cuda_runtime.h>

struct Pair {
    int n;
    float *q; // a device pointer inside a 16-byte by-value struct
};

__global__ void k(float *a, float *b, Pair pr, int n) {
    int i = threadIdx.x;
    if (i < n) a[i] = b[i] + pr.q[0];
}
__global__ void k0() {}

static void hostfn(void *) {}

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); } while (0)

int main(int argc, char **argv) {
    bool die = argc > 1 && std::string(argv[1]) == "abort";
    cudaStream_t s1, s2;
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CK(cudaStreamCreate(&s2));
    float *p, *p2, *p3, *pin;
    CK(cudaMallocAsync((void **)&p, 1 << 20, s1));
    CK(cudaMalloc((void **)&p2, 1 << 16));
    printf("p=%p p2=%p\n", (void *)p, (void *)p2);
    cudaEvent_t e;
    CK(cudaEventCreate(&e));
    CK(cudaEventRecord(e, s1));
    CK(cudaStreamWaitEvent(s2, e, 0));
    Pair pr{3, p2 + 2};
    k<<<1, 32, 0, s2>>>(p, p + 64, pr, 32);
    CK(cudaFreeAsync(p, s2));
    k<<<1, 32, 0, s2>>>(p, p + 64, pr, 0); // a use after free the shim must see (n=0: no access)
    CK(cudaStreamSynchronize(s2));
    if (die) { // everything recorded so far must survive
        printf("smoke: aborting\n");
        fflush(stdout);
        abort();
    }
    cudaStreamQuery(s1);
    cudaEventQuery(e);
    CK(cudaEventSynchronize(e));
    std::vector<float> h(1024, 1.0f);
    CK(cudaMemcpy(p2, h.data(), 64, cudaMemcpyHostToDevice)); // pageable
    CK(cudaMallocHost((void **)&pin, 4096));
    printf("host=%p pin=%p\n", (void *)h.data(), (void *)pin);
    CK(cudaMemcpyAsync(pin, p2, 64, cudaMemcpyDeviceToHost, s1)); // pinned
    CK(cudaMemcpy(p2 + 32, pin, 32, cudaMemcpyDefault));            // unified
    CK(cudaMemset(p2, 0, 100));
    CK(cudaMemsetAsync(p2, 0, 64, s1));
    CK(cudaMemcpy2DAsync(p2, 256, p2 + 512, 256, 100, 3, cudaMemcpyDeviceToDevice, s1));
    CK(cudaLaunchHostFunc(s1, hostfn, nullptr));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    k0<<<1, 1, 0, s1>>>();
    CK(cudaStreamEndCapture(s1, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaGraphLaunch(ge, s2));
    cudaMemPool_t pool;
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    CK(cudaMemPoolCreate(&pool, &props));
    CK(cudaMallocFromPoolAsync((void **)&p3, 4096, pool, s1));
    printf("p3=%p pool=%p\n", (void *)p3, (void *)pool);
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1);
    cfg.blockDim = dim3(32);
    cfg.stream = s1;
    CK(cudaLaunchKernelEx(&cfg, k, p3, p3 + 16, pr, 0));
    CK(cudaFreeAsync(p3, s1));
    void *big;
    cudaError_t r = cudaMallocAsync(&big, (size_t)1 << 50, s1); // fails
    cudaGetLastError();
    CK(cudaStreamSynchronize(cudaStreamPerThread));
    CK(cudaStreamSynchronize(cudaStreamLegacy));
    k<<<1, 32>>>(p2, p2, pr, 0); // default stream
    CK(cudaDeviceSynchronize());
    CK(cudaStreamDestroy(s2));
    CK(cudaEventDestroy(e));
    CK(cudaFree(p2));
    CK(cudaFreeHost(pin));
    printf("smoke done (big alloc: %d)\n", (int)r);
    return 0;
}
