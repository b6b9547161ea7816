// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// A range mapped with cuMemMap is used by a kernel on s1, and the host
// unmaps it (cuMemUnmap) while that kernel may still run: nothing orders the
// unmap after the kernel. The kernel touches the memory first and tells the
// host through a mapped pinned flag, then only spins, so the early unmap
// cannot fault it on the GPU.
#include "vmm.cuh"

int main() {
    sc::init("vmm_unmap_racy");
    vmm::Api api;
    cudaStream_t s1 = sc::make_stream(true);
    const size_t g = vmm::granularity(api);

    int* flag = nullptr;
    SC_CHECK(cudaHostAlloc((void**)&flag, sizeof(int), cudaHostAllocMapped));
    *flag = 0;

    CUdeviceptr base = 0;
    ep::driver_check(api.reserve(&base, g, 0, 0, 0), "cuMemAddressReserve");
    vmm::Chunk chunk = vmm::map_chunk(api, base, g);
    sc_touch_signal_spin<<<1, sc::kThreads, 0, s1>>>(reinterpret_cast<int*>(base), static_cast<int>(g / sizeof(int)), flag, sc::ms(40));
    SC_CHECK_LAUNCH();
    while (*reinterpret_cast<volatile int*>(flag) == 0) {
    }

    // BUG: the kernel on s1 may still run; no synchronization before the unmap.
    vmm::unmap_chunk(api, chunk);

    SC_CHECK(cudaStreamSynchronize(s1));
    ep::driver_check(api.address_free(base, g), "cuMemAddressFree");
    SC_CHECK(cudaFreeHost(flag));
    SC_CHECK(cudaStreamDestroy(s1));
    return sc::finish();
}
