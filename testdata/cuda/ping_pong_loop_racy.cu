// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// ping_pong_loop_ok, except that in iteration 137 (and only there) the
// producer skips the wait on `handback`: that one buffer is freed while the
// consumer's kernel may still use it. The consumer kernel of that iteration
// spins longer so the race is real. Exactly one finding is expected: every
// later iteration is ordered after iteration 137's consumer again (the next
// producer is that consumer's stream and the hand-offs resume).
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
    sc::init("ping_pong_loop_racy");
    cudaStream_t s[2] = {sc::make_stream(true), sc::make_stream(true)};
    cudaEvent_t handoff = sc::make_event();
    cudaEvent_t handback = sc::make_event();
    const int kIterations = 200;
    const int kMissedHandback = 137;
    const int n = 1 << 12;

    for (int it = 0; it < kIterations; ++it) {
        cudaStream_t producer = s[it % 2];
        cudaStream_t consumer = s[(it + 1) % 2];
        const bool missed = (it == kMissedHandback);

        Slot slot{nullptr, n, it};
        SC_CHECK(cudaMallocAsync((void**)&slot.data, sizeof(int) * n, producer));
        produce<<<2, 128, 0, producer>>>(slot, sc::ms(0.05));
        SC_CHECK_LAUNCH();
        SC_CHECK(cudaEventRecord(handoff, producer));

        SC_CHECK(cudaStreamWaitEvent(consumer, handoff, 0));
        consume<<<2, 128, 0, consumer>>>(slot, missed ? sc::ms(10) : sc::ms(0.05));
        SC_CHECK_LAUNCH();
        SC_CHECK(cudaEventRecord(handback, consumer));

        if (!missed) {
            SC_CHECK(cudaStreamWaitEvent(producer, handback, 0));
        }  // BUG (iteration 137 only): the producer frees without the hand-back.
        SC_CHECK(cudaFreeAsync(slot.data, producer));
    }

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaEventDestroy(handoff));
    SC_CHECK(cudaEventDestroy(handback));
    SC_CHECK(cudaStreamDestroy(s[0]));
    SC_CHECK(cudaStreamDestroy(s[1]));
    return sc::finish();
}
