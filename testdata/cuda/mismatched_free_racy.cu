// streamcheck-expect: mismatched-free
// streamcheck-expect-count: 5
// streamcheck-may-fail: cudaFree, cudaFreeHost, cudaFreeAsync, cudaHostUnregister (CUDA 13 rejects all five wrong frees)
//
// Each buffer is freed by another family's API: cudaFree of pinned host
// memory, cudaFreeHost of device memory, cudaFreeAsync of managed memory,
// cudaHostUnregister of host memory never registered, and cudaFree of a
// range mapped with cuMemMap. Each wrong call is wrapped in SC_SOFT: where
// CUDA rejects it, the buffer is then freed by the right API, so the program
// leaks nothing either way. The wrong free is the program's bug even when
// CUDA rejects it.
#include <cstdlib>

#include "vmm.cuh"

int main() {
    sc::init("mismatched_free_racy");
    vmm::Api api;
    cudaStream_t s1 = sc::make_stream(true);

    int* pinned = nullptr;
    SC_CHECK(cudaMallocHost((void**)&pinned, sc::kBytes));
    // BUG: pinned host memory freed with cudaFree.
    if (SC_SOFT(cudaFree(pinned)) != cudaSuccess) {
        SC_CHECK(cudaFreeHost(pinned));
    }

    int* device = nullptr;
    SC_CHECK(cudaMalloc((void**)&device, sc::kBytes));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(device, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaStreamSynchronize(s1));
    // BUG: device memory freed with cudaFreeHost.
    if (SC_SOFT(cudaFreeHost(device)) != cudaSuccess) {
        SC_CHECK(cudaFree(device));
    }

    int* managed = nullptr;
    SC_CHECK(cudaMallocManaged((void**)&managed, sc::kBytes));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(managed, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();
    // BUG: managed memory freed with cudaFreeAsync.
    if (SC_SOFT(cudaFreeAsync(managed, s1)) != cudaSuccess) {
        SC_CHECK(cudaStreamSynchronize(s1));
        SC_CHECK(cudaFree(managed));
    }
    SC_CHECK(cudaStreamSynchronize(s1));

    void* plain = std::malloc(sc::kBytes);
    // BUG: host memory that was never registered is unregistered.
    (void)SC_SOFT(cudaHostUnregister(plain));
    std::free(plain);

    const size_t g = vmm::granularity(api);
    CUdeviceptr base = 0;
    ep::driver_check(api.reserve(&base, g, 0, 0, 0), "cuMemAddressReserve");
    vmm::Chunk chunk = vmm::map_chunk(api, base, g);
    // BUG: a VMM mapping freed with cudaFree.
    if (SC_SOFT(cudaFree(reinterpret_cast<void*>(base))) != cudaSuccess) {
        vmm::unmap_chunk(api, chunk);
    } else {
        ep::driver_check(api.release(chunk.handle), "cuMemRelease");
    }
    ep::driver_check(api.address_free(base, g), "cuMemAddressFree");

    SC_CHECK(cudaStreamDestroy(s1));
    return sc::finish();
}
