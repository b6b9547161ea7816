// streamcheck-expect: clean
//
// The correct forms of host_free_racy (openxla/xla#46093, fixed by
// openxla/xla#47040): pinned memory set with cudaMemsetAsync and freed
// after cudaStreamSynchronize (XLA's fix); a device-to-host copy into
// pinned memory freed after cudaEventSynchronize on an event recorded
// after the copy; registered memory copied to the device and unregistered
// after cudaDeviceSynchronize.
#include "common.cuh"

#include <vector>

int main() {
    sc::init("host_free_ok");
    cudaStream_t s = sc::make_stream(true);
    cudaEvent_t copied = sc::make_event();

    int* h = nullptr;
    SC_CHECK(cudaHostAlloc((void**)&h, sc::kBytes, cudaHostAllocDefault));
    SC_CHECK(cudaMemsetAsync(h, 0, sc::kBytes, s));
    SC_CHECK(cudaStreamSynchronize(s));
    SC_CHECK(cudaFreeHost(h));

    int* d = nullptr;
    SC_CHECK(cudaMalloc((void**)&d, sc::kBytes));
    int* out = nullptr;
    SC_CHECK(cudaMallocHost((void**)&out, sc::kBytes));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s>>>(d, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaMemcpyAsync(out, d, sc::kBytes, cudaMemcpyDeviceToHost, s));
    SC_CHECK(cudaEventRecord(copied, s));
    SC_CHECK(cudaEventSynchronize(copied));
    SC_CHECK(cudaFreeHost(out));

    std::vector<int> buf(sc::kN, 7);
    SC_CHECK(cudaHostRegister(buf.data(), sc::kBytes, cudaHostRegisterDefault));
    sc_spin<<<1, 1, 0, s>>>(sc::ms(20));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaMemcpyAsync(d, buf.data(), sc::kBytes, cudaMemcpyHostToDevice, s));
    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaHostUnregister(buf.data()));

    SC_CHECK(cudaFree(d));
    SC_CHECK(cudaEventDestroy(copied));
    SC_CHECK(cudaStreamDestroy(s));
    return sc::finish();
}
