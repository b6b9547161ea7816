// streamcheck-expect: leak
// streamcheck-expect-count: 1
//
// Two cudaMallocAsync allocations; `kept` is freed properly, `leaked` never is.
// The program synchronizes before exiting, so there is no error, only the leak.
#include "common.cuh"

int main() {
    sc::init("leak_racy");
    cudaStream_t s1 = sc::make_stream(true);

    int* kept = nullptr;
    int* leaked = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&kept, sc::kBytes, s1));
    SC_CHECK(cudaMallocAsync((void**)&leaked, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(kept, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(leaked, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaFreeAsync(kept, s1));
    // BUG: `leaked` is never freed.

    SC_CHECK(cudaStreamSynchronize(s1));
    SC_CHECK(cudaStreamDestroy(s1));
    return sc::finish();
}
