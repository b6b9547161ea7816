// loop.cu: a launch-bound stream-ordered loop (7 recorded calls per iteration) to measure
// the recording overhead against the native run (bench/gpu-overhead.sh).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>
#include <cuda_runtime.h>

__global__ void add(float *a, const float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] += b[i];
}

static void worker(int iters, bool timed, double *us) {
    cudaStream_t s1, s2;
    cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
    cudaEvent_t e;
    cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    float *b;
    cudaMalloc(&b, 1 << 20);
    auto loop = [&](int n) {
        for (int i = 0; i < n; i++) {
            float *a;
            cudaMallocAsync(&a, 1 << 16, s1);
            add<<<16, 256, 0, s1>>>(a, b, 4096);
            add<<<16, 256, 0, s1>>>(a, b, 4096);
            cudaEventRecord(e, s1);
            cudaStreamWaitEvent(s2, e, 0);
            add<<<16, 256, 0, s2>>>(a, b, 4096);
            cudaFreeAsync(a, s2);
        }
        cudaStreamSynchronize(s1);
        cudaStreamSynchronize(s2);
    };
    loop(1000);
    auto t0 = std::chrono::steady_clock::now();
    loop(iters);
    auto t1 = std::chrono::steady_clock::now();
    *us = std::chrono::duration<double, std::micro>(t1 - t0).count() / iters;
}

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 20000;
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    std::vector<double> us(threads);
    std::vector<std::thread> th;
    for (int t = 0; t < threads; t++) th.emplace_back(worker, iters, true, &us[t]);
    for (auto &t : th) t.join();
    double worst = 0;
    for (double u : us) worst = u > worst ? u : worst;
    printf("bench: %.2f us per iteration (7 calls), %d thread(s)\n", worst, threads);
    return 0;
}
