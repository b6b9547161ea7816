// streamcheck-expect: clean
//
// Two host threads, each with its own non-blocking stream. Thread A allocates
// a buffer on its stream, fills it and records `ready`; thread B (after a
// host-side handshake that only makes sure the record was issued) waits on
// `ready`, uses the buffer and records `done`; thread A waits on `done` and
// frees the buffer. The kernels take the buffer inside a by-value struct.
#include "common.cuh"

// 64-bit scalar: the shim reads struct parameters as 8-byte words, and an
// int next to padding could look like a device address.
struct Chunk {
    int* data;
    long long n;
};

__global__ void fill_chunk(Chunk c, long long cycles) {
    const int stride = static_cast<int>(gridDim.x * blockDim.x);
    for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < static_cast<int>(c.n); i += stride) {
        c.data[i] = 2 * i;
    }
    sc_spin_for(cycles);
}

__global__ void bump_chunk(Chunk c, long long cycles) {
    sc_spin_for(cycles);
    const int stride = static_cast<int>(gridDim.x * blockDim.x);
    for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < static_cast<int>(c.n); i += stride) {
        c.data[i] += 1;
    }
}

// Host-only handshake between the two threads (not a CUDA synchronization).
static std::atomic<int> g_stage{0};
static int* g_buffer = nullptr;

static void wait_stage(int stage) {
    while (g_stage.load() < stage) {
        std::this_thread::yield();
    }
}

int main() {
    sc::init("multithread_ok");
    cudaEvent_t ready = sc::make_event();
    cudaEvent_t done = sc::make_event();

    std::thread a([&]() {
        SC_CHECK(cudaSetDevice(0));
        cudaStream_t sa = sc::make_stream(true);
        sc_spin<<<1, 32, 0, sa>>>(sc::ms(20));
        SC_CHECK_LAUNCH();
        int* p = nullptr;
        SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, sa));
        fill_chunk<<<sc::kBlocks, sc::kThreads, 0, sa>>>(Chunk{p, sc::kN}, sc::ms(5));
        SC_CHECK_LAUNCH();
        SC_CHECK(cudaEventRecord(ready, sa));
        g_buffer = p;
        g_stage.store(1);

        wait_stage(2);
        SC_CHECK(cudaStreamWaitEvent(sa, done, 0));
        SC_CHECK(cudaFreeAsync(p, sa));
        SC_CHECK(cudaStreamSynchronize(sa));
        SC_CHECK(cudaStreamDestroy(sa));
    });

    std::thread b([&]() {
        SC_CHECK(cudaSetDevice(0));
        cudaStream_t sb = sc::make_stream(true);
        wait_stage(1);
        SC_CHECK(cudaStreamWaitEvent(sb, ready, 0));
        bump_chunk<<<sc::kBlocks, sc::kThreads, 0, sb>>>(Chunk{g_buffer, sc::kN}, sc::ms(5));
        SC_CHECK_LAUNCH();
        SC_CHECK(cudaEventRecord(done, sb));
        g_stage.store(2);
        SC_CHECK(cudaStreamSynchronize(sb));
        SC_CHECK(cudaStreamDestroy(sb));
    });

    a.join();
    b.join();
    SC_CHECK(cudaEventDestroy(ready));
    SC_CHECK(cudaEventDestroy(done));
    return sc::finish();
}
