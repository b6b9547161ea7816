// streamcheck-expect: sync-alloc-in-loop
// streamcheck-expect-count: 1
//
// A hot loop allocates a scratch buffer with cudaMalloc, runs a kernel on it
// and frees it with cudaFree, 32 times. Each cudaFree waits for the device:
// correct, but a device-wide stall every pass. One warning for the site.
#include "common.cuh"

int main() {
    sc::init("sync_alloc_loop_racy");
    cudaStream_t s1 = sc::make_stream(true);
    for (int i = 0; i < 32; i++) {
        int* scratch = nullptr;
        SC_CHECK(cudaMalloc((void**)&scratch, sc::kBytes));
        sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(scratch, sc::kN, sc::ms(0.1));
        SC_CHECK_LAUNCH();
        SC_CHECK(cudaFree(scratch));
    }
    SC_CHECK(cudaStreamDestroy(s1));
    return sc::finish();
}
