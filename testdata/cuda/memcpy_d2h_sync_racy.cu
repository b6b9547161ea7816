// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// Like memcpy_d2h_sync_ok without the device-to-host copy: a device-to-device
// cudaMemcpy does not synchronize the host, so freeing its destination `b` on
// a non-blocking stream races with the copy (which itself waits behind a
// 20 ms kernel on the blocking stream s1). `a` is freed after a full sync.
#include "common.cuh"

int main() {
    sc::init("memcpy_d2h_sync_racy");
    cudaStream_t s1 = nullptr;
    SC_CHECK(cudaStreamCreate(&s1));  // blocking
    cudaStream_t s2 = sc::make_stream(true);

    int* a = nullptr;
    int* b = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&a, sc::kBytes, s1));
    SC_CHECK(cudaMallocAsync((void**)&b, sc::kBytes, s1));
    SC_CHECK(cudaStreamSynchronize(s1));

    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(a, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaMemcpy(b, a, sc::kBytes, cudaMemcpyDeviceToDevice));

    // BUG: the D2D copy may still be pending; the host is not ordered after it.
    SC_CHECK(cudaFreeAsync(b, s2));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFreeAsync(a, s2));
    SC_CHECK(cudaStreamSynchronize(s2));

    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
