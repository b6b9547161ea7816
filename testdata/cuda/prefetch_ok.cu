// streamcheck-expect: clean
//
// Managed memory prefetched to the device on a stream, written there by a
// kernel, prefetched back to the host on the same stream and read by the
// host after the stream is synchronized, then freed. Each prefetch is
// recorded as a use of the range on its stream (CUDA 13's
// cuMemPrefetchAsync takes a cudaMemLocation by value; CUDA 12's a device),
// ordered after the allocation and before the free: nothing here is a
// finding.
#include "common.cuh"

namespace {

cudaError_t prefetch(const void* p, size_t bytes, int device, cudaStream_t s) {
#if CUDART_VERSION >= 13000
    cudaMemLocation loc{};
    loc.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
    loc.id = device == cudaCpuDeviceId ? 0 : device;
    return cudaMemPrefetchAsync(p, bytes, loc, 0, s);
#else
    return cudaMemPrefetchAsync(p, bytes, device, s);
#endif
}

}  // namespace

int main() {
    sc::init("prefetch_ok");
    cudaStream_t s = sc::make_stream(true);

    int* p = nullptr;
    SC_CHECK(cudaMallocManaged((void**)&p, sc::kBytes));
    SC_CHECK(prefetch(p, sc::kBytes, 0, s));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s>>>(p, sc::kN, sc::ms(5));
    SC_CHECK_LAUNCH();
    SC_CHECK(prefetch(p, sc::kBytes, cudaCpuDeviceId, s));
    SC_CHECK(cudaStreamSynchronize(s));
    long long sum = 0;
    for (int i = 0; i < sc::kN; i++) sum += p[i];
    std::printf("sum %lld\n", sum);

    SC_CHECK(cudaFree(p));
    SC_CHECK(cudaStreamDestroy(s));
    return sc::finish();
}
