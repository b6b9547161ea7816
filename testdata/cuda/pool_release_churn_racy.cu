// streamcheck-expect: pool-release-churn
// streamcheck-expect-count: 1
//
// A created pool serves a loop of 32 steps: allocate from the pool on s1, run
// a kernel, free on s1, synchronize s1. The pool keeps its default release
// threshold of 0, so at every synchronization it gives its memory back to the
// system and the next step has to grow it again.
#include "common.cuh"

int main() {
    sc::init("pool_release_churn_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool = nullptr;
    SC_CHECK(cudaMemPoolCreate(&pool, &props));
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
