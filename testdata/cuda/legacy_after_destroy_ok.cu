// streamcheck-expect: clean
//
// p is written on a blocking stream, which is destroyed while the kernel
// still runs (cudaStreamDestroy returns at once). p is then freed on the
// legacy default stream. The legacy stream waits for the work of every
// blocking stream: does that include a destroyed stream's unfinished work?
// The program measures it (sc::legacy_waited): first with the stream live,
// where the documentation says yes, then destroyed. It fails (exit 1) if
// the legacy stream did not wait for the destroyed stream, since then this
// "ok" program has a real race.
#include "common.cuh"

int main() {
    sc::init("legacy_after_destroy_ok");
    int* flags = nullptr;  // flags[0]: done, flags[1]: what the legacy stream saw
    SC_CHECK(cudaMalloc((void**)&flags, 2 * sizeof(int)));
    sc::warm_legacy_probe(flags);
    // Allocated on the legacy stream and synchronized, so that only the free
    // is in question.
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, cudaStreamLegacy));
    SC_CHECK(cudaStreamSynchronize(cudaStreamLegacy));

    sc::legacy_waited(p, flags, false, false, false);
    if (!sc::legacy_waited(p, flags, false, true, true)) {
        ::sc::hard_errors()++;
    }
    SC_CHECK(cudaFree(flags));
    return sc::finish();
}
