// streamcheck-expect: use-after-free
// streamcheck-expect-count: 1
//
// A cudaMemsetAsync of one buffer that runs 256 bytes into its neighbour,
// which was freed just before on the same stream: a use after free that
// starts inside a live allocation. The pool places small allocations next
// to each other; the program picks two that are adjacent (and says so in a
// note) so the overrun really lands in the freed one.
#include "common.cuh"

#include <algorithm>

int main() {
    sc::init("copy_overrun_racy");
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
    sc::note(lo ? "adjacent allocations found" : "no two adjacent allocations: the overrun cannot be shown");

    if (lo) {
        SC_CHECK(cudaFreeAsync(hi, s1));
        // BUG: 256 bytes past the end of lo, into hi, which was freed above.
        SC_CHECK(cudaMemsetAsync(lo, 0, kSize + 256, s1));
    }
    for (auto b : buf)
        if (b != hi || !lo) SC_CHECK(cudaFreeAsync(b, s1));

    SC_CHECK(cudaStreamSynchronize(s1));
    SC_CHECK(cudaStreamDestroy(s1));
    return sc::finish();
}
