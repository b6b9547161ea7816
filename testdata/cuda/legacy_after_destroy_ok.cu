// streamcheck-expect: clean
//
// p is written on a blocking stream, which is destroyed while the kernel
// still runs (cudaStreamDestroy returns at once). p is then freed on the
// legacy default stream. The legacy stream waits for the work of every
// blocking stream: does that include a destroyed stream's unfinished work?
// The program measures it. The writer sets a done flag as its last act; a
// one-thread kernel on the legacy stream, issued right after the destroy,
// copies the flag. The program prints what it saw and fails (exit 1) if the
// legacy stream did not wait, since then this "ok" program has a real race.
#include "common.cuh"

int main() {
    sc::init("legacy_after_destroy_ok");
    int* flags = nullptr;  // flags[0]: done, flags[1]: what the legacy stream saw
    SC_CHECK(cudaMalloc((void**)&flags, 2 * sizeof(int)));
    SC_CHECK(cudaMemset(flags, 0, 2 * sizeof(int)));

    cudaStream_t s = sc::make_stream(false);
    // Allocated on the legacy stream and synchronized, so that only the free
    // is in question.
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, cudaStreamLegacy));
    SC_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
    sc_write_spin_mark<<<1, sc::kThreads, 0, s>>>(p, sc::kN, flags, sc::ms(50));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaStreamDestroy(s));

    sc_copy_flag<<<1, 1, 0, cudaStreamLegacy>>>(flags, flags + 1);
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaFreeAsync(p, cudaStreamLegacy));

    SC_CHECK(cudaDeviceSynchronize());
    int seen = -1;
    SC_CHECK(cudaMemcpy(&seen, flags + 1, sizeof(int), cudaMemcpyDeviceToHost));
    std::printf("STREAMCHECK_NOTE legacy stream waited for the destroyed blocking stream's kernel: %s\n",
                seen == 1 ? "yes" : "no");
    if (seen != 1) {
        ::sc::hard_errors()++;
    }
    SC_CHECK(cudaFree(flags));
    return sc::finish();
}
