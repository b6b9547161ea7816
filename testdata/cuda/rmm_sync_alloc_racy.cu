// streamcheck-expect: free-before-alloc
// streamcheck-expect-count: 1
//
// rapidsai/rmm#2156: cuda_async_memory_resource::allocate_sync allocated
// with cudaMallocAsync on the legacy default stream without synchronizing
// it, and promised a pointer valid on every stream; deallocate on a
// non-blocking stream then freed it ahead of its allocation. Here the
// legacy stream is busy for 20 ms, so the allocation is still pending when
// the non-blocking stream frees the pointer.
#include "common.cuh"

int main() {
    sc::init("rmm_sync_alloc_racy");
    cudaStream_t s = sc::make_stream(true);
    sc_spin<<<1, 1, 0, 0>>>(sc::ms(20));
    SC_CHECK_LAUNCH();
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, 256, 0)); // allocate_sync, before the fix

    // BUG: s is not ordered after the allocation on the legacy stream.
    SC_CHECK(cudaFreeAsync(p, s));

    SC_CHECK(cudaStreamSynchronize(s));
    SC_CHECK(cudaStreamDestroy(s));
    return sc::finish();
}
