// streamcheck-expect: clean
// streamcheck-allow: sync-alloc-in-loop (the cudaMalloc/kernel/cudaFree loop is the point: a true performance warning, no error)
//
// Four host threads allocate, use and free device memory in a loop, with
// cudaMalloc/cudaFree and with cudaMallocAsync/cudaFreeAsync on streams of
// their own: the driver hands an address one thread has just freed to
// another thread at once. Every use is ordered before its free, so nothing
// may be reported. A recorder that wrote a free into the trace after another
// thread's allocation of the same address (both are recorded when the call
// returns) would make the checker see the new allocation freed and then used.
#include <vector>

#include "common.cuh"

__global__ void touch(int* p, int n) {
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) {
        p[i] += 1;
    }
}

int main() {
    sc::init("threads_alloc_reuse_ok");
    constexpr int kThreads = 4, kRounds = 1000, kInts = 1024;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; t++) {
        threads.emplace_back([]() {
            SC_CHECK(cudaSetDevice(0));
            cudaStream_t s = sc::make_stream(true);
            for (int i = 0; i < kRounds; i++) {
                int* p = nullptr;
                SC_CHECK(cudaMalloc((void**)&p, kInts * sizeof(int)));
                touch<<<kInts / 128, 128, 0, s>>>(p, kInts);
                SC_CHECK_LAUNCH();
                SC_CHECK(cudaStreamSynchronize(s));
                SC_CHECK(cudaFree(p));
                int* q = nullptr;
                SC_CHECK(cudaMallocAsync((void**)&q, kInts * sizeof(int), s));
                touch<<<kInts / 128, 128, 0, s>>>(q, kInts);
                SC_CHECK_LAUNCH();
                SC_CHECK(cudaFreeAsync(q, s));
            }
            SC_CHECK(cudaStreamSynchronize(s));
            SC_CHECK(cudaStreamDestroy(s));
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    return sc::finish();
}
