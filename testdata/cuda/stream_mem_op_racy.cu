// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// The signal is sent too early: s1 writes 1 to the flag
// (cuStreamWriteValue32) before its 20 ms kernel that reads x, not after
// it. s2's wait for the value (cuStreamWaitValue32) orders s2 after the
// write only, and s2 frees x while the kernel still reads it. streamcheck
// follows the wait to the write, so the allocation before it is ordered
// and only the free is reported.
#include "entry_points.cuh"

int main() {
    sc::init("stream_mem_op_racy");
    auto write32 = ep::driver<decltype(&cuStreamWriteValue32)>("cuStreamWriteValue32");
    auto wait32 = ep::driver<decltype(&cuStreamWaitValue32)>("cuStreamWaitValue32");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);

    unsigned* flags = nullptr;
    SC_CHECK(cudaMalloc((void**)&flags, sizeof(unsigned)));
    SC_CHECK(cudaMemset(flags, 0, sizeof(unsigned)));
    SC_CHECK(cudaDeviceSynchronize());
    const CUdeviceptr flag = reinterpret_cast<CUdeviceptr>(flags);

    int* x = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&x, sc::kBytes, s1));
    ep::driver_check(write32(s1, flag, 1, CU_STREAM_WRITE_VALUE_DEFAULT), "cuStreamWriteValue32");
    sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(x, sc::kN, sc::ms(20));  // after the signal
    SC_CHECK_LAUNCH();
    ep::driver_check(wait32(s2, flag, 1, CU_STREAM_WAIT_VALUE_EQ), "cuStreamWaitValue32");
    SC_CHECK(cudaFreeAsync(x, s2));  // while the kernel reads x

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFree(flags));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
