// streamcheck-expect: clean
//
// A synchronous device-to-host cudaMemcpy orders the host after the copy.
// The copies run on the legacy stream, which waits for the blocking stream s1
// where the kernel wrote `a`; a D2D copy a -> b is ordered before the final
// D2H copy of b by the legacy stream itself. After the D2H copy returns, both
// buffers are freed on a non-blocking stream.
#include "common.cuh"

#include <vector>

int main() {
    sc::init("memcpy_d2h_sync_ok");
    cudaStream_t s1 = nullptr;
    SC_CHECK(cudaStreamCreate(&s1));  // blocking
    cudaStream_t s2 = sc::make_stream(true);
    std::vector<int> host(sc::kN);

    int* a = nullptr;
    int* b = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&a, sc::kBytes, s1));
    SC_CHECK(cudaMallocAsync((void**)&b, sc::kBytes, s1));
    SC_CHECK(cudaStreamSynchronize(s1));

    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(a, sc::kN, sc::ms(10));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaMemcpy(b, a, sc::kBytes, cudaMemcpyDeviceToDevice));
    SC_CHECK(cudaMemcpy(host.data(), b, sc::kBytes, cudaMemcpyDeviceToHost));
    std::printf("STREAMCHECK_NOTE host[7] = %d (expect 8)\n", host[7]);

    SC_CHECK(cudaFreeAsync(a, s2));
    SC_CHECK(cudaFreeAsync(b, s2));
    SC_CHECK(cudaStreamSynchronize(s2));

    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
