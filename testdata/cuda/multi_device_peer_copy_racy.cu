// streamcheck-devices: 2
// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// The twin of multi_device_peer_copy_ok with a non-blocking s0: the
// synchronous cudaMemcpyPeer does not wait for a non-blocking stream, nor
// does one wait for it (measured on two H200s: the copy does not see the
// kernel's last writes), so the free of src on s0 right after the copy is
// not ordered after it. The program prints whether the copy saw the
// kernel's last writes, without failing on it.
#include "common.cuh"

int main() {
    sc::init("multi_device_peer_copy_racy");
    if (!sc::has_devices(2)) {
        return sc::finish();
    }
    SC_CHECK(cudaSetDevice(1));
    int* dst = nullptr;
    SC_CHECK(cudaMalloc((void**)&dst, sc::kBytes));
    SC_CHECK(cudaSetDevice(0));
    cudaStream_t s0 = sc::make_stream(true);
    int* src = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&src, sc::kBytes, s0));
    SC_CHECK(cudaStreamSynchronize(s0));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s0>>>(src, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();

    SC_CHECK(cudaMemcpyPeer(dst, 1, src, 0, sc::kBytes));
    SC_CHECK(cudaFreeAsync(src, s0));  // BUG: a non-blocking s0 does not wait for the copy
    SC_CHECK(cudaDeviceSynchronize());

    int last = -1;
    SC_CHECK(cudaSetDevice(1));
    SC_CHECK(cudaMemcpy(&last, dst + sc::kN - 1, sizeof(int), cudaMemcpyDeviceToHost));
    std::printf("STREAMCHECK_NOTE the peer copy saw the kernel's last writes: %s\n", last == sc::kN ? "yes" : "no");
    SC_CHECK(cudaFree(dst));
    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaSetDevice(0));
    SC_CHECK(cudaStreamDestroy(s0));
    return sc::finish();
}
