// streamcheck-devices: 2
// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// Two GPUs. A 20 ms kernel on device 0's stream s0 uses p; the program then
// synchronizes device 1 (cudaDeviceSynchronize waits for the current device
// only) and frees p on another stream of device 0: the free is not ordered
// after the kernel.
#include "common.cuh"

int main() {
    sc::init("multi_device_sync_racy");
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
    SC_CHECK(cudaDeviceSynchronize());  // BUG: device 1 only
    SC_CHECK(cudaSetDevice(0));
    SC_CHECK(cudaFreeAsync(p, other));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaStreamDestroy(s0));
    SC_CHECK(cudaStreamDestroy(other));
    return sc::finish();
}
