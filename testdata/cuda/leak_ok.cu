// streamcheck-expect: clean
//
// Every cudaMallocAsync allocation is freed: one with cudaFreeAsync on its
// stream, one with the synchronous cudaFree after a cudaDeviceSynchronize.
#include "common.cuh"

int main() {
    sc::init("leak_ok");
    cudaStream_t s1 = sc::make_stream(true);

    int* a = nullptr;
    int* b = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&a, sc::kBytes, s1));
    SC_CHECK(cudaMallocAsync((void**)&b, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(a, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(b, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaFreeAsync(a, s1));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFree(b));

    SC_CHECK(cudaStreamDestroy(s1));
    return sc::finish();
}
