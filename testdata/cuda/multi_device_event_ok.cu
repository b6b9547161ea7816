// streamcheck-devices: 2
// streamcheck-expect: clean
//
// The twin of multi_device_event_racy: an event recorded on device 0's s0
// after the allocation is waited on by device 1's s1 before the read, and
// an event recorded on s1 after the read is waited on by s0 before the free.
// Cross-device event waits order the work of two GPUs.
#include "common.cuh"

int main() {
    sc::init("multi_device_event_ok");
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
    cudaEvent_t allocated = sc::make_event();
    SC_CHECK(cudaSetDevice(1));
    cudaStream_t s1 = sc::make_stream(true);
    cudaEvent_t read = sc::make_event();

    SC_CHECK(cudaSetDevice(0));
    sc_spin<<<1, 32, 0, s0>>>(sc::ms(20));
    SC_CHECK_LAUNCH();
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s0));
    SC_CHECK(cudaEventRecord(allocated, s0));

    SC_CHECK(cudaSetDevice(1));
    SC_CHECK(cudaStreamWaitEvent(s1, allocated, 0));
    sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecord(read, s1));

    SC_CHECK(cudaSetDevice(0));
    SC_CHECK(cudaStreamWaitEvent(s0, read, 0));
    SC_CHECK(cudaFreeAsync(p, s0));
    SC_CHECK(cudaStreamSynchronize(s0));
    SC_CHECK(cudaEventDestroy(allocated));
    SC_CHECK(cudaStreamDestroy(s0));
    SC_CHECK(cudaSetDevice(1));
    SC_CHECK(cudaEventDestroy(read));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaSetDevice(0));
    return sc::finish();
}
