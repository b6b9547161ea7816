// streamcheck-expect: clean
//
// One buffer of every allocation family, each used by a kernel (or, for host
// memory, by a copy) and freed by its own family's API after the work that
// uses it: device (cudaMalloc), pitched (cudaMallocPitch), pinned host
// (cudaMallocHost, cudaHostAlloc), registered host (cudaHostRegister),
// managed (cudaMallocManaged), stream-ordered (cudaMallocAsync from the
// default pool, cudaMallocFromPoolAsync from a created pool whose release
// threshold is set) and the driver's virtual memory management (a reserved
// range grown in place). Nothing here is a finding.
#include <cstdlib>
#include <initializer_list>

#include "vmm.cuh"

int main() {
    sc::init("all_families_ok");
    vmm::Api api;
    cudaStream_t s1 = sc::make_stream(true);

    int* device = nullptr;
    SC_CHECK(cudaMalloc((void**)&device, sc::kBytes));
    int* pitched = nullptr;
    size_t pitch = 0;
    SC_CHECK(cudaMallocPitch((void**)&pitched, &pitch, 1024, 64));
    int* pinned = nullptr;
    SC_CHECK(cudaMallocHost((void**)&pinned, sc::kBytes));
    int* host_alloc = nullptr;
    SC_CHECK(cudaHostAlloc((void**)&host_alloc, sc::kBytes, cudaHostAllocDefault));
    int* registered = static_cast<int*>(std::malloc(sc::kBytes));
    SC_CHECK(cudaHostRegister(registered, sc::kBytes, cudaHostRegisterDefault));
    int* managed = nullptr;
    SC_CHECK(cudaMallocManaged((void**)&managed, sc::kBytes));

    int* async = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&async, sc::kBytes, s1));
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool = nullptr;
    SC_CHECK(cudaMemPoolCreate(&pool, &props));
    uint64_t threshold = UINT64_MAX;
    SC_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    int* from_pool = nullptr;
    SC_CHECK(cudaMallocFromPoolAsync((void**)&from_pool, sc::kBytes, pool, s1));

    const size_t g = vmm::granularity(api);
    CUdeviceptr base = 0;
    ep::driver_check(api.reserve(&base, 2 * g, 0, 0, 0), "cuMemAddressReserve");
    vmm::Chunk first = vmm::map_chunk(api, base, g);
    vmm::Chunk second = vmm::map_chunk(api, base + g, g);
    int* vm = reinterpret_cast<int*>(base);

    for (int* p : {device, managed, async, from_pool, vm}) {
        sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, sc::kN, sc::ms(1));
        SC_CHECK_LAUNCH();
    }
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(pitched, static_cast<int>(pitch * 64 / sizeof(int)), sc::ms(1));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaMemcpyAsync(pinned, device, sc::kBytes, cudaMemcpyDeviceToHost, s1));
    SC_CHECK(cudaMemcpyAsync(host_alloc, device, sc::kBytes, cudaMemcpyDeviceToHost, s1));
    SC_CHECK(cudaMemcpyAsync(registered, device, sc::kBytes, cudaMemcpyDeviceToHost, s1));

    SC_CHECK(cudaFreeAsync(async, s1));
    SC_CHECK(cudaFreeAsync(from_pool, s1));
    SC_CHECK(cudaStreamSynchronize(s1));

    SC_CHECK(cudaFree(device));
    SC_CHECK(cudaFree(pitched));
    SC_CHECK(cudaFree(managed));
    SC_CHECK(cudaFreeHost(pinned));
    SC_CHECK(cudaFreeHost(host_alloc));
    SC_CHECK(cudaHostUnregister(registered));
    std::free(registered);
    vmm::unmap_chunk(api, second);
    vmm::unmap_chunk(api, first);
    ep::driver_check(api.address_free(base, 2 * g), "cuMemAddressFree");
    SC_CHECK(cudaMemPoolDestroy(pool));
    SC_CHECK(cudaStreamDestroy(s1));
    return sc::finish();
}
