// streamcheck-expect: invalid-free
// streamcheck-expect-count: 1
// streamcheck-may-fail: cudaFreeAsync (interior pointer; CUDA normally returns cudaErrorInvalidValue)
//
// cudaFreeAsync of p + 100 (an interior pointer, not the base of a live
// allocation), then the correct free of p. The bad free is wrapped in SC_SOFT;
// if CUDA rejects it (expected) the program prints STREAMCHECK_SOFT_FAIL and
// the invalid-free is only visible if the analyzer looks at failed frees.
#include "common.cuh"

int main() {
    sc::init("invalid_free_racy");
    cudaStream_t s1 = sc::make_stream(true);

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, sc::kN, sc::ms(2));
    SC_CHECK_LAUNCH();

    // BUG: not the base address of the allocation.
    SC_SOFT(cudaFreeAsync(p + 100, s1));

    SC_CHECK(cudaFreeAsync(p, s1));
    SC_CHECK(cudaStreamSynchronize(s1));
    SC_CHECK(cudaStreamDestroy(s1));
    return sc::finish();
}
