// streamcheck-expect: clean
//
// Stream memory operations order s2 after s1 as an event would. s1 writes x
// in a 20 ms kernel and then 1 to a flag (cuStreamWriteValue32); s2 waits
// for the flag to equal 1 (cuStreamWaitValue32) and frees x. Then a 64-bit
// counter: at each of three steps s1 reads y and raises the counter to the
// step's number, and s2 waits for the counter to reach it and reads y, each
// through cuStreamBatchMemOp; s2 frees y after the last wait.
#include "entry_points.cuh"

int main() {
    sc::init("stream_mem_op_ok");
    auto write32 = ep::driver<decltype(&cuStreamWriteValue32)>("cuStreamWriteValue32");
    auto wait32 = ep::driver<decltype(&cuStreamWaitValue32)>("cuStreamWaitValue32");
    auto batch = ep::driver<decltype(&cuStreamBatchMemOp)>("cuStreamBatchMemOp");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);

    uint64_t* flags = nullptr;  // the flag (32 bits) in flags[0], the counter in flags[1]
    SC_CHECK(cudaMalloc((void**)&flags, 2 * sizeof(uint64_t)));
    SC_CHECK(cudaMemset(flags, 0, 2 * sizeof(uint64_t)));
    SC_CHECK(cudaDeviceSynchronize());
    const CUdeviceptr flag = reinterpret_cast<CUdeviceptr>(flags);
    const CUdeviceptr counter = reinterpret_cast<CUdeviceptr>(flags + 1);

    int* x = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&x, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(x, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();
    ep::driver_check(write32(s1, flag, 1, CU_STREAM_WRITE_VALUE_DEFAULT), "cuStreamWriteValue32");
    ep::driver_check(wait32(s2, flag, 1, CU_STREAM_WAIT_VALUE_EQ), "cuStreamWaitValue32");
    SC_CHECK(cudaFreeAsync(x, s2));  // after the wait, so after s1's kernel

    int* y = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&y, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(y, sc::kN, sc::ms(5));
    SC_CHECK_LAUNCH();
    for (unsigned long long step = 1; step <= 3; step++) {
        sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(y, sc::kN, sc::ms(5));
        SC_CHECK_LAUNCH();
        CUstreamBatchMemOpParams raise = {};
        raise.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
        raise.writeValue.address = counter;
        raise.writeValue.value64 = step;
        raise.writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
        ep::driver_check(batch(s1, 1, &raise, 0), "cuStreamBatchMemOp (write)");
        CUstreamBatchMemOpParams reach = {};
        reach.waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
        reach.waitValue.address = counter;
        reach.waitValue.value64 = step;
        reach.waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
        ep::driver_check(batch(s2, 1, &reach, 0), "cuStreamBatchMemOp (wait)");
        sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(y, sc::kN, sc::ms(1));
        SC_CHECK_LAUNCH();
    }
    SC_CHECK(cudaFreeAsync(y, s2));  // after the last wait: after all of s1's kernels

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFree(flags));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
