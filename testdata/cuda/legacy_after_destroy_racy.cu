// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// The twin of legacy_after_destroy_ok with a cudaStreamNonBlocking stream:
// p is written on it, the stream is destroyed while the kernel still runs,
// and p is freed on the legacy default stream. The documentation promises
// no ordering between a non-blocking stream and the legacy stream, so the
// free races with the kernel.
//
// The program also measures what CUDA does. First, with a live non-blocking
// stream, a legacy kernel copies the writer's done flag: "no" shows that it
// ran while the 50 ms writer was still running. Then the same after the
// destroy. On CUDA 13.0 (driver 580, H200) the second answer was "yes": the
// legacy stream waited for the destroyed non-blocking stream. That is not
// documented, so streamcheck still reports the free.
#include "common.cuh"

// Writes p on a non-blocking stream, destroys the stream first if asked,
// and has a legacy-stream kernel copy the writer's done flag. Returns
// whether that kernel saw the writer finish.
static bool legacy_saw_writer_finish(int* p, int* flags, bool destroy) {
    cudaStream_t nb = sc::make_stream(true);
    SC_CHECK(cudaMemset(flags, 0, 2 * sizeof(int)));
    sc_write_spin_mark<<<1, sc::kThreads, 0, nb>>>(p, sc::kN, flags, sc::ms(50));
    SC_CHECK_LAUNCH();
    if (destroy) {
        SC_CHECK(cudaStreamDestroy(nb));
    }
    sc_copy_flag<<<1, 1, 0, cudaStreamLegacy>>>(flags, flags + 1);
    SC_CHECK_LAUNCH();
    if (destroy) {
        // BUG: the legacy stream is not ordered after nb's kernel.
        SC_CHECK(cudaFreeAsync(p, cudaStreamLegacy));
    }
    SC_CHECK(cudaDeviceSynchronize());
    if (!destroy) {
        SC_CHECK(cudaStreamDestroy(nb));
    }
    int seen = -1;
    SC_CHECK(cudaMemcpy(&seen, flags + 1, sizeof(int), cudaMemcpyDeviceToHost));
    return seen == 1;
}

int main() {
    sc::init("legacy_after_destroy_racy");
    int* flags = nullptr;  // flags[0]: done, flags[1]: what the legacy stream saw
    SC_CHECK(cudaMalloc((void**)&flags, 2 * sizeof(int)));
    // Allocated on the legacy stream and synchronized, so that only the free
    // is in question.
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, cudaStreamLegacy));
    SC_CHECK(cudaStreamSynchronize(cudaStreamLegacy));

    const bool live = legacy_saw_writer_finish(p, flags, false);
    std::printf("STREAMCHECK_NOTE legacy stream waited for a live non-blocking stream's kernel: %s\n",
                live ? "yes" : "no");
    const bool destroyed = legacy_saw_writer_finish(p, flags, true);
    std::printf("STREAMCHECK_NOTE legacy stream waited for a destroyed non-blocking stream's kernel: %s\n",
                destroyed ? "yes" : "no");
    SC_CHECK(cudaFree(flags));
    return sc::finish();
}
