// streamcheck-expect: clean
//
// memcpy_batch_racy with the hand-off: s2 waits for x's allocation on s1
// before the cudaMemcpyBatchAsync that copies into x and out of y. Then a
// second batch on s2 reads y with cudaMemcpySrcAccessOrderDuringApiCall:
// the read is done when the call returns, so s1 frees y right after it
// (having waited for s2's earlier work on y, not for this copy).
#include "common.cuh"

int main() {
    sc::init("memcpy_batch_ok");
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
    void* dsts[2] = {x, out};
    const void* srcs[2] = {in, y};
    size_t sizes[2] = {sc::kBytes, sc::kBytes};
    cudaMemcpyAttributes attr = {};
    attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    size_t attr_at = 0;
    SC_CHECK(cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, &attr, &attr_at, 1, s2));  // after x's allocation

    cudaEvent_t copied = sc::make_event();
    SC_CHECK(cudaEventRecord(copied, s2));
    SC_CHECK(cudaStreamWaitEvent(s1, copied, 0));  // s2's work on y so far
    SC_CHECK(cudaStreamSynchronize(s2));           // "no earlier stream work may be accessing the source"
    cudaMemcpyAttributes during = {};
    during.srcAccessOrder = cudaMemcpySrcAccessOrderDuringApiCall;
    void* dsts2[1] = {out};
    const void* srcs2[1] = {y};
    SC_SOFT(cudaMemcpyBatchAsync(dsts2, srcs2, sizes, 1, &during, &attr_at, 1, s2));  // y read before it returns
    SC_CHECK(cudaFreeAsync(y, s1));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFreeAsync(x, s1));
    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFreeHost(in));
    SC_CHECK(cudaFreeHost(out));
    SC_CHECK(cudaEventDestroy(allocated));
    SC_CHECK(cudaEventDestroy(copied));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
