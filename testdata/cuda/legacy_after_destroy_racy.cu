// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// The control for legacy_after_destroy_ok: the same program with a
// cudaStreamNonBlocking stream, which the legacy default stream does not wait
// for, destroyed or not. The free on the legacy stream races with the
// kernel. The program prints whether the legacy stream's kernel saw the done
// flag: "no" shows that the 50 ms writer was still running, so the "yes" of
// legacy_after_destroy_ok is the legacy stream waiting, not the writer
// having finished before the destroy.
#include "common.cuh"

int main() {
    sc::init("legacy_after_destroy_racy");
    int* flags = nullptr;  // flags[0]: done, flags[1]: what the legacy stream saw
    SC_CHECK(cudaMalloc((void**)&flags, 2 * sizeof(int)));
    SC_CHECK(cudaMemset(flags, 0, 2 * sizeof(int)));

    cudaStream_t s = sc::make_stream(true);  // BUG: the legacy stream does not wait for it
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
    std::printf("STREAMCHECK_NOTE legacy stream waited for the destroyed non-blocking stream's kernel: %s\n",
                seen == 1 ? "yes" : "no");
    SC_CHECK(cudaFree(flags));
    return sc::finish();
}
