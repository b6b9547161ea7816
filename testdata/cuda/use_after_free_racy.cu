// streamcheck-expect: use-after-free
// streamcheck-expect-count: 1
//
// Allocate, use and free on one stream, then launch another kernel on the
// freed pointer. Everything is on s1, so nothing else is wrong. The default
// pool keeps its memory (sc::init), so the stale kernel does not fault.
#include "common.cuh"

int main() {
    sc::init("use_after_free_racy");
    cudaStream_t s1 = sc::make_stream(true);

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, sc::kN, sc::ms(2));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaFreeAsync(p, s1));

    // BUG: p was freed above.
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, sc::kN, sc::ms(2));
    SC_CHECK_LAUNCH();

    SC_CHECK(cudaStreamSynchronize(s1));
    SC_CHECK(cudaStreamDestroy(s1));
    return sc::finish();
}
