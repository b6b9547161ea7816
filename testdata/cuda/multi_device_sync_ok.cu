// streamcheck-devices: 2
// streamcheck-expect: clean
//
// The twin of multi_device_sync_racy: after working on device 1, the
// program makes device 0 current again and synchronizes it before freeing
// p on another stream of device 0.
#include "common.cuh"

int main() {
    sc::init("multi_device_sync_ok");
    if (!sc::has_devices(2)) {
        return sc::finish();
    }
    SC_CHECK(cudaSetDevice(0));
    cudaStream_t s0 = sc::make_stream(true);
    cudaStream_t other = sc::make_stream(true);
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s0));
    SC_CHECK(cudaStreamSynchronize(s0));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s0>>>(p, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();

    SC_CHECK(cudaSetDevice(1));
    SC_CHECK(cudaDeviceSynchronize());  // device 1: orders nothing on device 0
    SC_CHECK(cudaSetDevice(0));
    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFreeAsync(p, other));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaStreamDestroy(s0));
    SC_CHECK(cudaStreamDestroy(other));
    return sc::finish();
}
