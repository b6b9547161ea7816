// Probe: which pending work does a synchronous cudaMemcpyPeer wait for?
// A 20 ms kernel writes src on device 0 (on a non-blocking stream, a
// blocking stream, or the legacy stream), then cudaMemcpyPeer copies src to
// device 1 at once; the copy "saw" the kernel if it copied its last writes.
// Then the destination side: a 20 ms kernel on device 1 writes dst (i, then
// i+1), and the copy of a src of 7s follows at once: the copy waited for it
// if dst ends as 7, not 8.
// Last, whether synchronizing the destination device waits for the copy: a
// 20 ms kernel on device 0's legacy stream, the copy (which waits for it),
// then cudaDeviceSynchronize on device 1, timed.
// Build: nvcc -O2 -arch=sm_90 -I testdata/cuda -o peer_copy_order scripts/probe/peer_copy_order.cu
// With --default-stream per-thread, "legacy" in the output is the calling
// thread's per-thread default stream. Two H200s, CUDA 13.0: both builds
// print "non-blocking did not wait, blocking waited, legacy waited" on both
// sides, and the destination device's synchronization took the 20 ms.
#include "common.cuh"

static bool saw(cudaStream_t s, int* src, int* dst) {
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s>>>(src, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaMemcpyPeer(dst, 1, src, 0, sc::kBytes));
    SC_CHECK(cudaSetDevice(0));
    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaSetDevice(1));
    int last = -1;
    SC_CHECK(cudaMemcpy(&last, dst + sc::kN - 1, sizeof(int), cudaMemcpyDeviceToHost));
    SC_CHECK(cudaMemset(dst, 0, sc::kBytes));
    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaSetDevice(0));
    return last == sc::kN;
}

__global__ void fill7(int* p, int n) {
    for (int i = static_cast<int>(threadIdx.x); i < n; i += static_cast<int>(blockDim.x)) p[i] = 7;
}

static bool dst_waited(cudaStream_t s1, int* src, int* dst) {
    fill7<<<1, 256, 0, 0>>>(src, sc::kN);
    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaSetDevice(1));
    sc_write_spin<<<1, sc::kThreads, 0, s1>>>(dst, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaSetDevice(0));
    SC_CHECK(cudaMemcpyPeer(dst, 1, src, 0, sc::kBytes));
    SC_CHECK(cudaSetDevice(1));
    SC_CHECK(cudaDeviceSynchronize());
    int last = -1;
    SC_CHECK(cudaMemcpy(&last, dst + sc::kN - 1, sizeof(int), cudaMemcpyDeviceToHost));
    SC_CHECK(cudaSetDevice(0));
    return last == 7;
}

static double sync_dst_ms(int* src, int* dst) {
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, 0>>>(src, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaMemcpyPeer(dst, 1, src, 0, sc::kBytes));
    SC_CHECK(cudaSetDevice(1));
    const auto t0 = std::chrono::steady_clock::now();
    SC_CHECK(cudaDeviceSynchronize());
    const std::chrono::duration<double, std::milli> d = std::chrono::steady_clock::now() - t0;
    SC_CHECK(cudaSetDevice(0));
    SC_CHECK(cudaDeviceSynchronize());
    return d.count();
}

int main() {
    sc::init("peer_copy_order");
    if (!sc::has_devices(2)) return sc::finish();
    SC_CHECK(cudaSetDevice(1));
    int* dst = nullptr;
    SC_CHECK(cudaMalloc((void**)&dst, sc::kBytes));
    SC_CHECK(cudaSetDevice(0));
    int* src = nullptr;
    SC_CHECK(cudaMalloc((void**)&src, sc::kBytes));
    cudaStream_t nb = sc::make_stream(true), bl = sc::make_stream(false);
    saw(0, src, dst);  // load the kernel first (lazy loading waits for running work)
    for (int i = 0; i < 3; ++i) {
        std::printf("STREAMCHECK_NOTE round %d: non-blocking %s, blocking %s, legacy %s\n", i,
                    saw(nb, src, dst) ? "waited" : "did not wait", saw(bl, src, dst) ? "waited" : "did not wait",
                    saw(0, src, dst) ? "waited" : "did not wait");
    }
    SC_CHECK(cudaSetDevice(1));
    cudaStream_t nb1 = sc::make_stream(true), bl1 = sc::make_stream(false);
    SC_CHECK(cudaSetDevice(0));
    dst_waited(bl1, src, dst);  // load the kernels
    for (int i = 0; i < 3; ++i) {
        std::printf("STREAMCHECK_NOTE round %d, destination side: non-blocking %s, blocking %s, legacy %s\n", i,
                    dst_waited(nb1, src, dst) ? "waited" : "did not wait", dst_waited(bl1, src, dst) ? "waited" : "did not wait",
                    dst_waited(0, src, dst) ? "waited" : "did not wait");
    }
    sync_dst_ms(src, dst);
    for (int i = 0; i < 3; ++i) {
        std::printf("STREAMCHECK_NOTE round %d: cudaDeviceSynchronize on the destination device took %.1f ms\n", i,
                    sync_dst_ms(src, dst));
    }
    return sc::finish();
}
