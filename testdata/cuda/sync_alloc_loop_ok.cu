// streamcheck-expect: clean
//
// The loop of sync_alloc_loop_racy done as the allocation guide suggests:
// the scratch buffer comes from cudaMallocAsync and goes back with
// cudaFreeAsync on the stream the kernel runs on, 32 times; one cudaMalloc
// buffer allocated outside the loop is used by every pass.
#include "common.cuh"

int main() {
    sc::init("sync_alloc_loop_ok");
    cudaStream_t s1 = sc::make_stream(true);
    int* weights = nullptr;
    SC_CHECK(cudaMalloc((void**)&weights, sc::kBytes));
    for (int i = 0; i < 32; i++) {
        int* scratch = nullptr;
        SC_CHECK(cudaMallocAsync((void**)&scratch, sc::kBytes, s1));
        sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(scratch, sc::kN, sc::ms(0.1));
        SC_CHECK_LAUNCH();
        sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(weights, sc::kN, sc::ms(0.1));
        SC_CHECK_LAUNCH();
        SC_CHECK(cudaFreeAsync(scratch, s1));
    }
    SC_CHECK(cudaStreamSynchronize(s1));
    SC_CHECK(cudaFree(weights));
    SC_CHECK(cudaStreamDestroy(s1));
    return sc::finish();
}
