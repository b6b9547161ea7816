// streamcheck-devices: 2
// streamcheck-expect: clean
//
// Two GPUs. A 20 ms kernel on device 0's blocking stream s0 writes src;
// cudaMemcpyPeer copies src to dst on device 1 with no event, and src is
// freed on s0 right after. cudaMemcpyPeer waits for the legacy and blocking
// streams of both sides' devices, and they wait for it (measured on two
// H200s, scripts/probe/peer_copy_order.cu; not for non-blocking streams:
// see multi_device_peer_copy_racy), so the copy follows the kernel and the
// free follows the copy. The program checks on the GPU that the copy saw
// the kernel's last writes, and fails if not.
#include "common.cuh"

int main() {
    sc::init("multi_device_peer_copy_ok");
    if (!sc::has_devices(2)) {
        return sc::finish();
    }
    SC_CHECK(cudaSetDevice(1));
    int* dst = nullptr;
    SC_CHECK(cudaMalloc((void**)&dst, sc::kBytes));
    SC_CHECK(cudaSetDevice(0));
    cudaStream_t s0 = sc::make_stream(false);
    int* src = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&src, sc::kBytes, s0));
    SC_CHECK(cudaStreamSynchronize(s0));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s0>>>(src, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();

    SC_CHECK(cudaMemcpyPeer(dst, 1, src, 0, sc::kBytes));  // serialized: after the kernel
    SC_CHECK(cudaFreeAsync(src, s0));                        // serialized: after the copy
    SC_CHECK(cudaDeviceSynchronize());

    int last = -1;
    SC_CHECK(cudaSetDevice(1));
    SC_CHECK(cudaMemcpy(&last, dst + sc::kN - 1, sizeof(int), cudaMemcpyDeviceToHost));
    std::printf("STREAMCHECK_NOTE the peer copy saw the kernel's last writes: %s\n", last == sc::kN ? "yes" : "no");
    if (last != sc::kN) {
        ::sc::hard_errors()++;
    }
    SC_CHECK(cudaFree(dst));
    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaSetDevice(0));
    SC_CHECK(cudaStreamDestroy(s0));
    return sc::finish();
}
