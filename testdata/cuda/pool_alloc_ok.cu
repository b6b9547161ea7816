// streamcheck-expect: clean
//
// cudaMallocFromPoolAsync from an explicitly created pool on s1, handed to s2
// and back with events, freed on s1; the pool is destroyed after a sync.
// A second allocation from the same pool reuses the freed block on s1.
#include "common.cuh"

int main() {
    sc::init("pool_alloc_ok");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t allocated = sc::make_event();
    cudaEvent_t used = sc::make_event();

    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool = nullptr;
    SC_CHECK(cudaMemPoolCreate(&pool, &props));
    uint64_t threshold = UINT64_MAX;
    SC_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));

    sc_spin<<<1, 32, 0, s1>>>(sc::ms(20));
    SC_CHECK_LAUNCH();
    int* p = nullptr;
    SC_CHECK(cudaMallocFromPoolAsync((void**)&p, sc::kBytes, pool, s1));
    SC_CHECK(cudaEventRecord(allocated, s1));

    SC_CHECK(cudaStreamWaitEvent(s2, allocated, 0));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(p, sc::kN, sc::ms(5));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecord(used, s2));

    SC_CHECK(cudaStreamWaitEvent(s1, used, 0));
    SC_CHECK(cudaFreeAsync(p, s1));

    int* q = nullptr;
    SC_CHECK(cudaMallocFromPoolAsync((void**)&q, sc::kBytes, pool, s1));
    sc::note_reuse(p, q);
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(q, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaFreeAsync(q, s1));

    SC_CHECK(cudaStreamSynchronize(s1));
    SC_CHECK(cudaMemPoolDestroy(pool));

    SC_CHECK(cudaEventDestroy(allocated));
    SC_CHECK(cudaEventDestroy(used));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
