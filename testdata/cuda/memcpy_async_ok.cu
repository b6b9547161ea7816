// streamcheck-expect: clean
//
// memcpy_async_racy with the hand-back: s1 waits on an event recorded on s2
// after the device-to-device cudaMemcpyAsync before freeing both buffers.
#include "common.cuh"

int main() {
    sc::init("memcpy_async_ok");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t filled = sc::make_event();
    cudaEvent_t copied = sc::make_event();

    int* src = nullptr;
    int* dst = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&src, sc::kBytes, s1));
    SC_CHECK(cudaMallocAsync((void**)&dst, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(src, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecord(filled, s1));

    SC_CHECK(cudaStreamWaitEvent(s2, filled, 0));
    sc_spin<<<1, 32, 0, s2>>>(sc::ms(20));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaMemcpyAsync(dst, src, sc::kBytes, cudaMemcpyDeviceToDevice, s2));
    SC_CHECK(cudaEventRecord(copied, s2));

    SC_CHECK(cudaStreamWaitEvent(s1, copied, 0));
    SC_CHECK(cudaFreeAsync(src, s1));
    SC_CHECK(cudaFreeAsync(dst, s1));
    SC_CHECK(cudaStreamSynchronize(s1));

    SC_CHECK(cudaEventDestroy(filled));
    SC_CHECK(cudaEventDestroy(copied));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
