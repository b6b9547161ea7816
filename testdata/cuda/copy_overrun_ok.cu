// streamcheck-expect: clean
//
// The correct neighbour of copy_overrun_racy: a cudaMemsetAsync that spans
// two adjacent live allocations of its own stream is fine, and so is a set
// that ends at the last byte of a buffer whose neighbour was freed.
#include "common.cuh"

#include <algorithm>

int main() {
    sc::init("copy_overrun_ok");
    cudaStream_t s1 = sc::make_stream(true);

    constexpr int kCount = 8;
    constexpr size_t kSize = 4096;
    char* buf[kCount] = {};
    for (auto& b : buf) SC_CHECK(cudaMallocAsync((void**)&b, kSize, s1));
    char* sorted[kCount];
    std::copy(buf, buf + kCount, sorted);
    std::sort(sorted, sorted + kCount);
    char *lo = nullptr, *hi = nullptr;
    for (int i = 0; i + 1 < kCount && !lo; i++)
        if (sorted[i + 1] == sorted[i] + kSize) lo = sorted[i], hi = sorted[i + 1];
    sc::note(lo ? "adjacent allocations found" : "no two adjacent allocations");

    if (lo) {
        SC_CHECK(cudaMemsetAsync(lo, 0, 2 * kSize, s1));  // both live, both s1's
        SC_CHECK(cudaFreeAsync(hi, s1));
        SC_CHECK(cudaMemsetAsync(lo, 0, kSize, s1));  // ends where hi began
    }
    for (auto b : buf)
        if (b != hi || !lo) SC_CHECK(cudaFreeAsync(b, s1));

    SC_CHECK(cudaStreamSynchronize(s1));
    SC_CHECK(cudaStreamDestroy(s1));
    return sc::finish();
}
