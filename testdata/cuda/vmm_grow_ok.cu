// streamcheck-expect: clean
//
// An allocator grows a buffer in place with the driver's virtual memory
// management: it reserves room for two chunks, maps the first, fills it on
// s1, then maps the second chunk right after the first and runs a kernel
// over both. Before unmapping, the host synchronizes s1. Mapping the next
// range is no finding, and nothing is unmapped while work may use it.
#include "vmm.cuh"

int main() {
    sc::init("vmm_grow_ok");
    vmm::Api api;
    cudaStream_t s1 = sc::make_stream(true);
    const size_t g = vmm::granularity(api);

    CUdeviceptr base = 0;
    ep::driver_check(api.reserve(&base, 2 * g, 0, 0, 0), "cuMemAddressReserve");
    vmm::Chunk first = vmm::map_chunk(api, base, g);
    int* p = reinterpret_cast<int*>(base);
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, static_cast<int>(g / sizeof(int)), sc::ms(2));
    SC_CHECK_LAUNCH();

    // Grow: the second chunk extends the buffer in place.
    vmm::Chunk second = vmm::map_chunk(api, base + g, g);
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, static_cast<int>(2 * g / sizeof(int)), sc::ms(2));
    SC_CHECK_LAUNCH();

    SC_CHECK(cudaStreamSynchronize(s1));
    vmm::unmap_chunk(api, second);
    vmm::unmap_chunk(api, first);
    ep::driver_check(api.address_free(base, 2 * g), "cuMemAddressFree");
    SC_CHECK(cudaStreamDestroy(s1));
    return sc::finish();
}
