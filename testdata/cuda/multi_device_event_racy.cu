// streamcheck-devices: 2
// streamcheck-expect: use-before-alloc
// streamcheck-expect-count: 1
//
// Two GPUs. p is allocated from device 0's pool on device 0's stream s0,
// behind a 20 ms spin, and read by a kernel on device 1's stream s1 (device
// 1 may access device 0's pool): no event orders the read after the
// allocation. Device numbers come from the context current at each call.
#include "common.cuh"

int main() {
    sc::init("multi_device_event_racy");
    if (!sc::has_devices(2)) {
        return sc::finish();
    }
    cudaMemPool_t pool0 = nullptr;
    SC_CHECK(cudaDeviceGetDefaultMemPool(&pool0, 0));
    cudaMemAccessDesc access = {};
    access.location.type = cudaMemLocationTypeDevice;
    access.location.id = 1;
    access.flags = cudaMemAccessFlagsProtReadWrite;
    SC_CHECK(cudaMemPoolSetAccess(pool0, &access, 1));

    SC_CHECK(cudaSetDevice(0));
    cudaStream_t s0 = sc::make_stream(true);
    SC_CHECK(cudaSetDevice(1));
    cudaStream_t s1 = sc::make_stream(true);

    SC_CHECK(cudaSetDevice(0));
    sc_spin<<<1, 32, 0, s0>>>(sc::ms(20));
    SC_CHECK_LAUNCH();
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s0));

    SC_CHECK(cudaSetDevice(1));
    // BUG: s1 (device 1) does not wait for s0 (device 0) after the allocation.
    sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaDeviceSynchronize());

    SC_CHECK(cudaSetDevice(0));
    SC_CHECK(cudaFreeAsync(p, s0));
    SC_CHECK(cudaStreamSynchronize(s0));
    SC_CHECK(cudaStreamDestroy(s0));
    SC_CHECK(cudaSetDevice(1));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaSetDevice(0));
    return sc::finish();
}
