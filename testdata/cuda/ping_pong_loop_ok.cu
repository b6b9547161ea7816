// streamcheck-expect: clean
//
// 200 iterations of two streams handing a fresh buffer back and forth. In
// iteration i the producer stream (s1 for even i, s2 for odd i) allocates a
// buffer, fills it and records `handoff`; the consumer stream waits on it,
// reads the buffer and records `handback`; the producer waits on that and
// frees the buffer. The kernels take the buffer inside a by-value struct.
// The pool keeps reusing the same few addresses across iterations.
#include "common.cuh"

// 64-bit scalars: the shim reads struct parameters as 8-byte words, and two
// packed ints (or an int and padding) could look like a device address.
struct Slot {
    int* data;
    long long n;
    long long iteration;
};

__global__ void produce(Slot slot, long long cycles) {
    const int stride = static_cast<int>(gridDim.x * blockDim.x);
    for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < static_cast<int>(slot.n); i += stride) {
        slot.data[i] = static_cast<int>(slot.iteration);
    }
    sc_spin_for(cycles);
}

__global__ void consume(Slot slot, long long cycles) {
    sc_spin_for(cycles);
    const int stride = static_cast<int>(gridDim.x * blockDim.x);
    for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < static_cast<int>(slot.n); i += stride) {
        slot.data[i] += 1;
    }
}

int main() {
    sc::init("ping_pong_loop_ok");
    cudaStream_t s[2] = {sc::make_stream(true), sc::make_stream(true)};
    cudaEvent_t handoff = sc::make_event();
    cudaEvent_t handback = sc::make_event();
    const int kIterations = 200;
    const int n = 1 << 12;

    for (int it = 0; it < kIterations; ++it) {
        cudaStream_t producer = s[it % 2];
        cudaStream_t consumer = s[(it + 1) % 2];

        Slot slot{nullptr, n, it};
        SC_CHECK(cudaMallocAsync((void**)&slot.data, sizeof(int) * n, producer));
        produce<<<2, 128, 0, producer>>>(slot, sc::ms(0.05));
        SC_CHECK_LAUNCH();
        SC_CHECK(cudaEventRecord(handoff, producer));

        SC_CHECK(cudaStreamWaitEvent(consumer, handoff, 0));
        consume<<<2, 128, 0, consumer>>>(slot, sc::ms(0.05));
        SC_CHECK_LAUNCH();
        SC_CHECK(cudaEventRecord(handback, consumer));

        SC_CHECK(cudaStreamWaitEvent(producer, handback, 0));
        SC_CHECK(cudaFreeAsync(slot.data, producer));
    }

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaEventDestroy(handoff));
    SC_CHECK(cudaEventDestroy(handback));
    SC_CHECK(cudaStreamDestroy(s[0]));
    SC_CHECK(cudaStreamDestroy(s[1]));
    return sc::finish();
}
