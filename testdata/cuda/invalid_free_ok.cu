// streamcheck-expect: clean
//
// A kernel works on the interior pointer p + 100 but the free uses the base
// p; also cudaFree(nullptr), which CUDA documents as a no-op.
#include "common.cuh"

int main() {
    sc::init("invalid_free_ok");
    cudaStream_t s1 = sc::make_stream(true);

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p + 100, sc::kN - 100, sc::ms(2));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaFreeAsync(p, s1));
    SC_CHECK(cudaStreamSynchronize(s1));

    SC_CHECK(cudaFree(nullptr));  // documented no-op

    SC_CHECK(cudaStreamDestroy(s1));
    return sc::finish();
}
