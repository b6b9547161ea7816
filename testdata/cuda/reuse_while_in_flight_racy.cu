// streamcheck-expect: reuse-while-in-flight
// streamcheck-expect-count: 1
// streamcheck-allow: use-before-alloc
//
// A 20 ms kernel on s1 uses p; p is freed on s1 (legal: stream-ordered after
// the kernel) and a new allocation q of the same size is made on s1, which the
// pool serves from p's block right away. q is then used on s2 without any
// synchronization, while the old kernel still touches the same memory.
// The use of q on s2 is also not ordered after q's allocation on s1, so an
// analyzer may additionally report use-before-alloc (allowed, not required).
// The program prints whether the address was actually reused.
#include "common.cuh"

int main() {
    sc::init("reuse_while_in_flight_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaFreeAsync(p, s1));

    int* q = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&q, sc::kBytes, s1));
    sc::note_reuse(p, q);

    // BUG: s2 does not wait for s1, where the old kernel still uses this memory.
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(q, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFreeAsync(q, s1));
    SC_CHECK(cudaStreamSynchronize(s1));

    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
