// streamcheck-expect: clean
//
// cudaFree of cudaMallocAsync memory is legal once every use is complete:
// here a cudaDeviceSynchronize orders the host after the kernel first.
#include "common.cuh"

int main() {
    sc::init("free_while_in_flight_sync_free_ok");
    cudaStream_t s1 = sc::make_stream(true);

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, sc::kN, sc::ms(10));
    SC_CHECK_LAUNCH();

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFree(p));

    SC_CHECK(cudaStreamDestroy(s1));
    return sc::finish();
}
