// streamcheck-expect: use-before-alloc
// streamcheck-expect-count: 1
//
// p is allocated on the legacy default stream (0) behind a 20 ms spin kernel
// and used on a cudaStreamNonBlocking stream, which does NOT synchronize with
// the legacy stream.
#include "common.cuh"

int main() {
    sc::init("legacy_stream_racy");
    cudaStream_t legacy = 0;
    cudaStream_t nb = sc::make_stream(true);

    sc_spin<<<1, 32, 0, legacy>>>(sc::ms(20));
    SC_CHECK_LAUNCH();
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, legacy));

    // BUG: a non-blocking stream is not ordered after legacy-stream work.
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, nb>>>(p, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFreeAsync(p, legacy));
    SC_CHECK(cudaStreamSynchronize(legacy));

    SC_CHECK(cudaStreamDestroy(nb));
    return sc::finish();
}
