// streamcheck-expect: clean
//
// The same address freed twice, but as two different allocations: p is
// allocated and freed, q (same size, same stream) usually gets p's address
// back, and is freed once. Nothing is a double free.
#include "common.cuh"

int main() {
    sc::init("double_free_ok");
    cudaStream_t s1 = sc::make_stream(true);

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, sc::kN, sc::ms(2));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaFreeAsync(p, s1));

    int* q = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&q, sc::kBytes, s1));
    sc::note_reuse(p, q);
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(q, sc::kN, sc::ms(2));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaFreeAsync(q, s1));

    SC_CHECK(cudaStreamSynchronize(s1));
    SC_CHECK(cudaStreamDestroy(s1));
    return sc::finish();
}
