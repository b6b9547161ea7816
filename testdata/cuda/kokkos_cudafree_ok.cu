// streamcheck-expect: clean
//
// The fixes kokkos/kokkos#9307 discusses: cudaDeviceSynchronize before
// cudaFree of stream-ordered memory, or cudaFreeAsync on the stream of the
// kernel that used it.
#include "common.cuh"

int main() {
    sc::init("kokkos_cudafree_ok");
    cudaStream_t s = sc::make_stream(true);
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, 0));
    SC_CHECK(cudaDeviceSynchronize());
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s>>>(p, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFree(p));

    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, 0));
    SC_CHECK(cudaDeviceSynchronize());
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s>>>(p, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaFreeAsync(p, s));
    SC_CHECK(cudaStreamSynchronize(s));
    SC_CHECK(cudaStreamDestroy(s));
    return sc::finish();
}
