// Shared body of entry_points_racy.cu and entry_points_ok.cu: one buffer per
// CUDA entry point, each allocated on s1 and then used on s2 through that
// entry point, so each entry point the shim must decode produces its own
// finding in the racy program (and nothing in the correct one).
//
// Driver entry points are called through cudaGetDriverEntryPointByVersion, the
// way libraries that do not link libcuda reach the driver, so the programs
// need no -lcuda.
#pragma once

#include <cuda.h>

#include "common.cuh"

namespace ep {

constexpr int kUses = 10;
// 2D/3D shapes covering exactly sc::kBytes: 1024-byte rows, 64 rows, 4 slices.
constexpr size_t kRow = 1024;
constexpr size_t kRows = 64;
constexpr size_t kSlices = 4;
static_assert(kRow * kRows * kSlices == sc::kBytes, "shape must cover the buffer");

template <typename F>
F driver(const char* name) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
    SC_CHECK(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &status));
    if (fn == nullptr || status != cudaDriverEntryPointSuccess) {
        std::fprintf(stderr, "STREAMCHECK_CUDA_ERROR driver entry point %s not found\n", name);
        sc::hard_errors()++;
    }
    return reinterpret_cast<F>(fn);
}

inline void driver_check(CUresult r, const char* what) {
    if (r != CUDA_SUCCESS) {
        std::fprintf(stderr, "STREAMCHECK_CUDA_ERROR %s -> CUresult %d\n", what, static_cast<int>(r));
        sc::hard_errors()++;
    }
}

static void CUDART_CB hold_stream(cudaStream_t, cudaError_t, void*) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
}

inline cudaMemcpy3DParms copy3d(void* dst, const void* src) {
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(const_cast<void*>(src), kRow, kRow, kRows);
    p.dstPtr = make_cudaPitchedPtr(dst, kRow, kRow, kRows);
    p.extent = make_cudaExtent(kRow, kRows, kSlices);
    p.kind = cudaMemcpyDeviceToDevice;
    return p;
}

// Runs the program. With handoff, s2 waits for an event recorded on s1 after
// the allocations (correct); without it, nothing orders s2 after them (racy).
inline int run(const char* name, bool handoff) {
    sc::init(name);
    auto launch_ex = driver<decltype(&cuLaunchKernelEx)>("cuLaunchKernelEx");
    auto launch_coop = driver<decltype(&cuLaunchCooperativeKernel)>("cuLaunchCooperativeKernel");
    auto launch = driver<decltype(&cuLaunchKernel)>("cuLaunchKernel");
    auto memset2d32 = driver<decltype(&cuMemsetD2D32Async)>("cuMemsetD2D32Async");
    if (sc::hard_errors() != 0) {
        return sc::finish();
    }
    CUfunction write_spin = nullptr;
    SC_CHECK(cudaGetFuncBySymbol(reinterpret_cast<cudaFunction_t*>(&write_spin),
                                 reinterpret_cast<const void*>(sc_write_spin)));

    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    int* src = nullptr;  // an ordinary cudaMalloc buffer, only read
    SC_CHECK(cudaMalloc(reinterpret_cast<void**>(&src), sc::kBytes));
    SC_CHECK(cudaMemsetAsync(src, 0, sc::kBytes, s2));  // s2 is synchronized before cudaFree(src)

    // s1 is held by a host callback, then a spin kernel, so the allocations
    // behind them complete in stream order well after s2 starts using them.
    SC_CHECK(cudaStreamAddCallback(s1, hold_stream, nullptr, 0));
    sc_spin<<<1, 32, 0, s1>>>(sc::ms(20));
    SC_CHECK_LAUNCH();
    int* buf[kUses] = {};
    for (int i = 0; i < kUses; i++) {
        SC_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&buf[i]), sc::kBytes, s1));
    }
    cudaEvent_t ready = sc::make_event();
    if (handoff) {
        SC_CHECK(cudaEventRecord(ready, s1));
        SC_CHECK(cudaStreamWaitEvent(s2, ready, 0));
    }

    int n = sc::kN;
    long long cycles = sc::ms(1);
    dim3 grid(sc::kBlocks), block(sc::kThreads);
    // Each use below is a use-before-alloc in the racy program.
    {
        void* args[] = {&buf[0], &n, &cycles};
        SC_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(sc_write_spin), grid, block, args, 0, s2));
    }
    {
        void* args[] = {&buf[1], &n, &cycles};
        CUlaunchConfig cfg = {};
        cfg.gridDimX = sc::kBlocks, cfg.gridDimY = 1, cfg.gridDimZ = 1;
        cfg.blockDimX = sc::kThreads, cfg.blockDimY = 1, cfg.blockDimZ = 1;
        cfg.hStream = s2;
        driver_check(launch_ex(&cfg, write_spin, args, nullptr), "cuLaunchKernelEx");
    }
    {
        void* args[] = {&buf[2], &n, &cycles};
        driver_check(launch_coop(write_spin, sc::kBlocks, 1, 1, sc::kThreads, 1, 1, 0, s2, args),
                     "cuLaunchCooperativeKernel");
    }
    {
        // Parameters packed into one buffer and passed through `extra`.
        struct {
            int* data;
            int n;
            long long cycles;
        } packed = {buf[3], n, cycles};
        size_t size = sizeof(packed);
        void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                         CU_LAUNCH_PARAM_END};
        driver_check(launch(write_spin, sc::kBlocks, 1, 1, sc::kThreads, 1, 1, 0, s2, nullptr, extra),
                     "cuLaunchKernel(extra)");
    }
    {
        cudaMemcpy3DParms p = copy3d(buf[4], src);
        SC_CHECK(cudaMemcpy3DAsync(&p, s2));
    }
    {
        cudaMemcpy3DPeerParms p = {};
        p.srcPtr = make_cudaPitchedPtr(src, kRow, kRow, kRows);
        p.dstPtr = make_cudaPitchedPtr(buf[5], kRow, kRow, kRows);
        p.extent = make_cudaExtent(kRow, kRows, kSlices);
        p.srcDevice = 0;
        p.dstDevice = 0;
        SC_CHECK(cudaMemcpy3DPeerAsync(&p, s2));
    }
    SC_CHECK(cudaMemcpyPeerAsync(buf[6], 0, src, 0, sc::kBytes, s2));
    driver_check(memset2d32(reinterpret_cast<CUdeviceptr>(buf[7]), kRow, 7u, kRow / 4, kRows * kSlices, s2),
                 "cuMemsetD2D32Async");
    SC_CHECK(cudaMemset2DAsync(buf[8], kRow, 0, kRow, kRows * kSlices, s2));
    SC_CHECK(cudaMemcpy2DAsync(buf[9], kRow, src, kRow, kRow, kRows * kSlices, cudaMemcpyDeviceToDevice, s2));

    // Free on s2 after its own uses: ordered after them, and (with the
    // hand-off) after the allocations.
    SC_CHECK(cudaStreamSynchronize(s1));
    for (int i = 0; i < kUses; i++) {
        SC_CHECK(cudaFreeAsync(buf[i], s2));
    }
    SC_CHECK(cudaStreamSynchronize(s2));
    SC_CHECK(cudaFree(src));
    SC_CHECK(cudaEventDestroy(ready));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}

}  // namespace ep
