// streamcheck-expect: clean
//
// memcpy3d_batch_racy with the hand-off: s2 waits for x's allocation on s1
// before the cudaMemcpy3DBatchAsync that copies into x and out of y, and
// s1 waits for the batch before it frees x.
#include "common.cuh"

// A pointer-to-pointer copy of the whole buffer, as rows of 1024 bytes.
static cudaMemcpy3DBatchOp rows(void* dst, const void* src) {
    cudaMemcpy3DBatchOp op = {};
    op.src.type = cudaMemcpyOperandTypePointer;
    op.src.op.ptr.ptr = const_cast<void*>(src);
    op.dst.type = cudaMemcpyOperandTypePointer;
    op.dst.op.ptr.ptr = dst;
    op.extent = make_cudaExtent(1024, sc::kBytes / 1024, 1);
    op.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    return op;
}

int main() {
    sc::init("memcpy3d_batch_ok");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);

    int* y = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&y, sc::kBytes, s2));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(y, sc::kN, sc::ms(0.1));
    SC_CHECK_LAUNCH();
    sc_spin<<<1, 1, 0, s1>>>(sc::ms(20));
    SC_CHECK_LAUNCH();
    int* x = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&x, sc::kBytes, s1));

    cudaEvent_t allocated = sc::make_event();
    SC_CHECK(cudaEventRecord(allocated, s1));
    SC_CHECK(cudaStreamWaitEvent(s2, allocated, 0));

    int *in = nullptr, *out = nullptr;
    SC_CHECK(cudaMallocHost((void**)&in, sc::kBytes));
    SC_CHECK(cudaMallocHost((void**)&out, sc::kBytes));
    cudaMemcpy3DBatchOp ops[2] = {rows(x, in), rows(out, y)};
    SC_CHECK(cudaMemcpy3DBatchAsync(2, ops, 0, s2));  // after x's allocation
    cudaEvent_t copied = sc::make_event();
    SC_CHECK(cudaEventRecord(copied, s2));
    SC_CHECK(cudaStreamWaitEvent(s1, copied, 0));
    SC_CHECK(cudaFreeAsync(x, s1));  // after the batch

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFreeAsync(y, s2));
    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFreeHost(in));
    SC_CHECK(cudaFreeHost(out));
    SC_CHECK(cudaEventDestroy(allocated));
    SC_CHECK(cudaEventDestroy(copied));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
