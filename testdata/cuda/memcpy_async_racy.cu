// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// src and dst are allocated on s1, src is filled on s1 and handed to s2, where
// a device-to-device cudaMemcpyAsync dst <- src runs behind a 20 ms spin
// kernel. s1 frees the copy's SOURCE without waiting for s2. dst is freed
// after a full synchronization.
#include "common.cuh"

int main() {
    sc::init("memcpy_async_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t filled = sc::make_event();

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

    // BUG: s1 does not wait for the copy on s2, which still reads src.
    SC_CHECK(cudaFreeAsync(src, s1));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFreeAsync(dst, s1));
    SC_CHECK(cudaStreamSynchronize(s1));

    SC_CHECK(cudaEventDestroy(filled));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
