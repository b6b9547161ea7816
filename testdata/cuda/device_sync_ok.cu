// streamcheck-expect: clean
//
// cudaDeviceSynchronize after the allocation lets two other streams use the
// buffer; a second cudaDeviceSynchronize after both kernels orders the free.
#include "common.cuh"

int main() {
    sc::init("device_sync_ok");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaStream_t s3 = sc::make_stream(true);

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    SC_CHECK(cudaDeviceSynchronize());

    sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(p, sc::kN, sc::ms(10));
    SC_CHECK_LAUNCH();
    sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s3>>>(p, sc::kN, sc::ms(10));
    SC_CHECK_LAUNCH();

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFreeAsync(p, s1));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    SC_CHECK(cudaStreamDestroy(s3));
    return sc::finish();
}
