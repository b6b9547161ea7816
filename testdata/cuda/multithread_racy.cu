// streamcheck-expect: use-before-alloc
// streamcheck-expect-count: 1
//
// Two host threads, each with its own non-blocking stream. Thread A allocates
// a buffer on its stream behind a 20 ms spin kernel and publishes the pointer
// through host memory; thread B uses it on its own stream right away, with no
// CUDA event between the streams. The main thread frees the buffer after both
// threads joined and a cudaDeviceSynchronize.
#include "common.cuh"

// 64-bit scalar: the shim reads struct parameters as 8-byte words, and an
// int next to padding could look like a device address.
struct Chunk {
    int* data;
    long long n;
};

__global__ void bump_chunk(Chunk c, long long cycles) {
    sc_spin_for(cycles);
    const int stride = static_cast<int>(gridDim.x * blockDim.x);
    for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < static_cast<int>(c.n); i += stride) {
        c.data[i] += 1;
    }
}

static std::atomic<int*> g_buffer{nullptr};

int main() {
    sc::init("multithread_racy");
    cudaStream_t sa = sc::make_stream(true);
    cudaStream_t sb = sc::make_stream(true);

    std::thread a([&]() {
        SC_CHECK(cudaSetDevice(0));
        sc_spin<<<1, 32, 0, sa>>>(sc::ms(20));
        SC_CHECK_LAUNCH();
        int* p = nullptr;
        SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, sa));
        g_buffer.store(p);
    });

    std::thread b([&]() {
        SC_CHECK(cudaSetDevice(0));
        int* p = nullptr;
        while ((p = g_buffer.load()) == nullptr) {
            std::this_thread::yield();
        }
        // BUG: sb is not ordered after the allocation on sa.
        bump_chunk<<<sc::kBlocks, sc::kThreads, 0, sb>>>(Chunk{p, sc::kN}, sc::ms(1));
        SC_CHECK_LAUNCH();
    });

    a.join();
    b.join();

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFreeAsync(g_buffer.load(), sa));
    SC_CHECK(cudaStreamSynchronize(sa));
    SC_CHECK(cudaStreamDestroy(sa));
    SC_CHECK(cudaStreamDestroy(sb));
    return sc::finish();
}
