// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// The twin of legacy_after_destroy_ok with a cudaStreamNonBlocking stream:
// p is written on it, the stream is destroyed while the kernel still runs,
// and p is freed on the legacy default stream. The documentation promises
// no ordering between a non-blocking stream and the legacy stream, so the
// free races with the kernel. The program also measures what CUDA does
// (sc::legacy_waited), with the stream live and destroyed; it prints the
// answers and does not fail on them.
#include "common.cuh"

int main() {
    sc::init("legacy_after_destroy_racy");
    int* flags = nullptr;  // flags[0]: done, flags[1]: what the legacy stream saw
    SC_CHECK(cudaMalloc((void**)&flags, 2 * sizeof(int)));
    sc::warm_legacy_probe(flags);
    // Allocated on the legacy stream and synchronized, so that only the free
    // is in question.
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, cudaStreamLegacy));
    SC_CHECK(cudaStreamSynchronize(cudaStreamLegacy));

    sc::legacy_waited(p, flags, true, false, false);
    // BUG: the free on the legacy stream is not ordered after the kernel.
    sc::legacy_waited(p, flags, true, true, true);
    SC_CHECK(cudaFree(flags));
    return sc::finish();
}
