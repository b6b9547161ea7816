// streamcheck-expect: clean
//
// A created pool serves a loop of 32 steps: allocate from the pool on s1, run
// a kernel, free on s1, synchronize s1. The pool's release threshold is set
// to the maximum first (cudaMemPoolAttrReleaseThreshold), so it keeps its
// memory across the synchronizations.
#include "common.cuh"

int main() {
    sc::init("pool_release_churn_ok");
    cudaStream_t s1 = sc::make_stream(true);
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool = nullptr;
    SC_CHECK(cudaMemPoolCreate(&pool, &props));
    uint64_t threshold = UINT64_MAX;
    SC_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    for (int i = 0; i < 32; i++) {
        int* p = nullptr;
        SC_CHECK(cudaMallocFromPoolAsync((void**)&p, sc::kBytes, pool, s1));
        sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, sc::kN, sc::ms(0.1));
        SC_CHECK_LAUNCH();
        SC_CHECK(cudaFreeAsync(p, s1));
        SC_CHECK(cudaStreamSynchronize(s1));
    }
    SC_CHECK(cudaMemPoolDestroy(pool));
    SC_CHECK(cudaStreamDestroy(s1));
    return sc::finish();
}
