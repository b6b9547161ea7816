// streamcheck-expect: double-free
// streamcheck-expect-count: 1
// streamcheck-may-fail: cudaFreeAsync (second free of the same pointer; CUDA may return cudaErrorInvalidValue)
//
// p is allocated, used and freed on s1, then freed again on s1. The second
// cudaFreeAsync is wrapped in SC_SOFT: if CUDA rejects it the program prints
// STREAMCHECK_SOFT_FAIL, and since failed calls are not analyzed, the
// double-free is then only visible if the analyzer looks at failed frees.
#include "common.cuh"

int main() {
    sc::init("double_free_racy");
    cudaStream_t s1 = sc::make_stream(true);

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, sc::kN, sc::ms(2));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaFreeAsync(p, s1));

    // BUG: p is freed a second time.
    SC_SOFT(cudaFreeAsync(p, s1));

    SC_CHECK(cudaStreamSynchronize(s1));
    SC_CHECK(cudaStreamDestroy(s1));
    return sc::finish();
}
