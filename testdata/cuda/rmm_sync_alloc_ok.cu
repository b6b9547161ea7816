// streamcheck-expect: clean
//
// The fix of rapidsai/rmm#2156 (rapidsai/rmm#2165): allocate_sync
// synchronizes the legacy default stream after cudaMallocAsync, so the
// pointer is valid on the non-blocking stream that frees it.
#include "common.cuh"

int main() {
    sc::init("rmm_sync_alloc_ok");
    cudaStream_t s = sc::make_stream(true);
    sc_spin<<<1, 1, 0, 0>>>(sc::ms(20));
    SC_CHECK_LAUNCH();
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, 256, 0));
    SC_CHECK(cudaStreamSynchronize(0));
    SC_CHECK(cudaFreeAsync(p, s));
    SC_CHECK(cudaStreamSynchronize(s));
    SC_CHECK(cudaStreamDestroy(s));
    return sc::finish();
}
