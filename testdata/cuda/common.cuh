// Shared helpers for the streamcheck CUDA test programs (testdata/cuda/*.cu).
//
// Every program is a single translation unit that includes this header, so the
// kernels below are defined here (non-static, to avoid "declared but never
// referenced" diagnostics for the ones a program does not use).
//
// Conventions used by the programs:
//   * SC_CHECK(call)  checks a call that is expected to succeed. A failure is
//                     printed as "STREAMCHECK_CUDA_ERROR ..." and counted; the
//                     program keeps going and exits 1 at the end.
//   * SC_SOFT(call)   wraps the deliberately wrong call of a racy program that
//                     CUDA itself may reject (double free, interior-pointer
//                     free). A failure prints "STREAMCHECK_SOFT_FAIL ...", a
//                     success prints "STREAMCHECK_SOFT_OK ..."; neither
//                     changes the exit code.
//   * sc::finish()    synchronizes the device, prints "STREAMCHECK_DONE ..."
//                     and returns the exit code (0 unless an SC_CHECK failed).
//   * Kernels take the device memory they touch as plain pointer parameters
//     (or a by-value struct holding one), so the recording shim finds the
//     addresses in the launch's parameter words.
//   * Allocation sizes are multiples of 4 KiB and every spin length is chosen
//     so that the racy interleavings really overlap on the GPU.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>

namespace sc {

// Roughly the SM clock of an H100/H200 (about 1.98 GHz boost). Only needs to
// be right within a factor of two: it turns milliseconds into clock64() ticks.
constexpr long long kCyclesPerMs = 2000000LL;

inline long long ms(double milliseconds) {
    return static_cast<long long>(milliseconds * static_cast<double>(kCyclesPerMs));
}

// Default buffer: 64 Ki ints (256 KiB).
constexpr int kN = 1 << 16;
constexpr size_t kBytes = sizeof(int) * static_cast<size_t>(kN);

// Launch shape used for "use" kernels: few blocks, so that kernels on other
// streams can run concurrently on the remaining SMs.
constexpr int kBlocks = 4;
constexpr int kThreads = 256;

inline std::atomic<int>& hard_errors() {
    static std::atomic<int> n{0};
    return n;
}

inline std::atomic<int>& soft_failures() {
    static std::atomic<int> n{0};
    return n;
}

inline cudaError_t check(cudaError_t err, const char* expr, const char* file, int line, bool soft) {
    if (err != cudaSuccess) {
        std::fprintf(stderr, "%s %s:%d: %s -> %s: %s\n",
                     soft ? "STREAMCHECK_SOFT_FAIL" : "STREAMCHECK_CUDA_ERROR", file, line, expr,
                     cudaGetErrorName(err), cudaGetErrorString(err));
        std::fflush(stderr);
        // Clear the (non-sticky) error so that a later cudaGetLastError() after
        // a kernel launch does not report this one again.
        (void)cudaGetLastError();
        if (soft) {
            soft_failures()++;
        } else {
            hard_errors()++;
        }
    } else if (soft) {
        std::printf("STREAMCHECK_SOFT_OK %s:%d: %s\n", file, line, expr);
        std::fflush(stdout);
    }
    return err;
}

}  // namespace sc

#define SC_CHECK(expr) ::sc::check((expr), #expr, __FILE__, __LINE__, false)
#define SC_SOFT(expr) ::sc::check((expr), #expr, __FILE__, __LINE__, true)
// Call right after a <<<...>>> launch.
#define SC_CHECK_LAUNCH() ::sc::check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__, false)

// ---------------------------------------------------------------------------
// Device side
// ---------------------------------------------------------------------------

__device__ __forceinline__ void sc_spin_for(long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

// Occupies a stream for `cycles` without touching any memory.
__global__ void sc_spin(long long cycles) {
    if (threadIdx.x == 0) {
        sc_spin_for(cycles);
    }
}

// Writes every element at the start, spins, then updates every element again,
// so `data` is accessed during the whole lifetime of the kernel.
__global__ void sc_write_spin(int* data, int n, long long cycles) {
    const int stride = static_cast<int>(gridDim.x * blockDim.x);
    const int first = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    for (int i = first; i < n; i += stride) {
        data[i] = i;
    }
    sc_spin_for(cycles);
    for (int i = first; i < n; i += stride) {
        data[i] += 1;
    }
}

// Reads every element and writes a checksum back into element 0 of its own
// range only if it is impossible, so the reads cannot be optimized away.
__global__ void sc_read_spin(int* data, int n, long long cycles) {
    const int stride = static_cast<int>(gridDim.x * blockDim.x);
    const int first = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    int acc = 0;
    for (int i = first; i < n; i += stride) {
        acc ^= data[i];
    }
    sc_spin_for(cycles);
    if (acc == 0x7fffffff && first < n) {
        data[first] = acc;
    }
}

// Launch with ONE block. Touches `data` first, then tells the host through a
// mapped pinned flag that it is done with the memory, then spins without
// touching `data` again. Used by racy programs whose deliberately early free
// may unmap the memory (cudaFreeAsync of cudaMalloc memory, cudaFree): the
// free is still issued while the kernel is in flight, but cannot fault it.
__global__ void sc_touch_signal_spin(int* data, int n, int* host_flag, long long cycles) {
    for (int i = static_cast<int>(threadIdx.x); i < n; i += static_cast<int>(blockDim.x)) {
        data[i] = i;
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence_system();
        *reinterpret_cast<volatile int*>(host_flag) = 1;
        __threadfence_system();
        sc_spin_for(cycles);
    }
}

// Launch with ONE block: writes data, spins, writes it again, then sets *done,
// so a kernel that copies *done (sc_copy_flag) tells whether it ran after.
__global__ void sc_write_spin_mark(int* data, int n, int* done, long long cycles) {
    for (int i = static_cast<int>(threadIdx.x); i < n; i += static_cast<int>(blockDim.x)) {
        data[i] = i;
    }
    sc_spin_for(cycles);
    for (int i = static_cast<int>(threadIdx.x); i < n; i += static_cast<int>(blockDim.x)) {
        data[i] += 1;
    }
    __syncthreads();
    __threadfence();
    if (threadIdx.x == 0) {
        *done = 1;
    }
}

// Copies the flag sc_write_spin_mark sets into *seen.
__global__ void sc_copy_flag(const int* done, int* seen) {
    *seen = *reinterpret_cast<const volatile int*>(done);
}

// ---------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------

namespace sc {

// Selects device 0 and makes the default memory pool keep all memory it ever
// mapped (release threshold = max), so a deliberately early free never unmaps
// memory that an in-flight kernel of the racy program still touches.
inline void init(const char* program) {
    std::printf("STREAMCHECK_PROGRAM %s\n", program);
    std::fflush(stdout);
    SC_CHECK(cudaSetDevice(0));
    cudaMemPool_t pool = nullptr;
    if (SC_CHECK(cudaDeviceGetDefaultMemPool(&pool, 0)) == cudaSuccess) {
        uint64_t threshold = UINT64_MAX;
        SC_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    }
}

inline cudaStream_t make_stream(bool non_blocking) {
    cudaStream_t s = nullptr;
    SC_CHECK(cudaStreamCreateWithFlags(&s, non_blocking ? cudaStreamNonBlocking : cudaStreamDefault));
    return s;
}

inline cudaEvent_t make_event() {
    cudaEvent_t e = nullptr;
    SC_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return e;
}

// Notes that the lead reads in the program output (not errors).
inline void note(const char* what) {
    std::printf("STREAMCHECK_NOTE %s\n", what);
    std::fflush(stdout);
}

inline void note_reuse(const void* old_ptr, const void* new_ptr) {
    std::printf("STREAMCHECK_NOTE address reused: %s (old %p, new %p)\n",
                old_ptr == new_ptr ? "yes" : "no", old_ptr, new_ptr);
    std::fflush(stdout);
}

// A pinned, mapped host int that a kernel sets to 1 (see sc_touch_signal_spin).
struct HostFlag {
    int* host = nullptr;
    int* device = nullptr;
};

inline HostFlag make_flag() {
    HostFlag f;
    if (SC_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&f.host), sizeof(int), cudaHostAllocMapped)) ==
        cudaSuccess) {
        *f.host = 0;
        SC_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&f.device), f.host, 0));
    }
    return f;
}

// Busy-waits (host only, invisible to CUDA and to streamcheck) until the flag
// is set, at most `timeout_s` seconds.
inline bool wait_flag(const HostFlag& f, double timeout_s = 10.0) {
    if (f.host == nullptr) {
        return false;
    }
    const auto start = std::chrono::steady_clock::now();
    while (*reinterpret_cast<volatile int*>(f.host) == 0) {
        const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - start;
        if (waited.count() > timeout_s) {
            note("host flag wait timed out");
            return false;
        }
        std::this_thread::yield();
    }
    return true;
}

inline void free_flag(HostFlag& f) {
    if (f.host != nullptr) {
        SC_CHECK(cudaFreeHost(f.host));
    }
    f.host = nullptr;
    f.device = nullptr;
}

// Whether the legacy default stream waits for a 50 ms kernel on a stream:
// the kernel writes p on a new stream (non-blocking or not), which is
// destroyed right after the launch if asked, and a one-thread kernel on the
// legacy stream copies the done flag the writer sets last. With free_p, p is
// then freed on the legacy stream. Call warm_legacy_probe first: the first
// launch of a kernel loads it (lazy loading), and that waits for the work
// running on the device, which would answer yes whatever the rule.
inline bool legacy_waited(int* p, int* flags, bool non_blocking, bool destroy, bool free_p) {
    cudaStream_t s = make_stream(non_blocking);
    SC_CHECK(cudaMemset(flags, 0, 2 * sizeof(int)));
    sc_write_spin_mark<<<1, kThreads, 0, s>>>(p, kN, flags, ms(50));
    SC_CHECK_LAUNCH();
    if (destroy) {
        SC_CHECK(cudaStreamDestroy(s));
    }
    sc_copy_flag<<<1, 1, 0, cudaStreamLegacy>>>(flags, flags + 1);
    SC_CHECK_LAUNCH();
    if (free_p) {
        SC_CHECK(cudaFreeAsync(p, cudaStreamLegacy));
    }
    SC_CHECK(cudaDeviceSynchronize());
    if (!destroy) {
        SC_CHECK(cudaStreamDestroy(s));
    }
    int seen = -1;
    SC_CHECK(cudaMemcpy(&seen, flags + 1, sizeof(int), cudaMemcpyDeviceToHost));
    std::printf("STREAMCHECK_NOTE legacy stream waited for a%s %s stream's kernel: %s\n", destroy ? " destroyed" : " live",
                non_blocking ? "non-blocking" : "blocking", seen == 1 ? "yes" : "no");
    std::fflush(stdout);
    return seen == 1;
}

// Loads the kernels legacy_waited uses, with nothing else running.
inline void warm_legacy_probe(int* flags) {
    sc_write_spin_mark<<<1, 1, 0, cudaStreamLegacy>>>(flags, 0, flags, 0);
    SC_CHECK_LAUNCH();
    sc_copy_flag<<<1, 1, 0, cudaStreamLegacy>>>(flags, flags + 1);
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaDeviceSynchronize());
}

// Whether the machine has n GPUs; says so when not (the program then
// only finishes: gpu-run.sh skips it by its streamcheck-devices header).
inline bool has_devices(int n) {
    int devices = 0;
    SC_CHECK(cudaGetDeviceCount(&devices));
    if (devices < n) {
        note("needs more devices");
        return false;
    }
    return true;
}

// Final synchronization and summary; returns the process exit code.
inline int finish() {
    SC_CHECK(cudaDeviceSynchronize());
    const int hard = hard_errors().load();
    const int soft = soft_failures().load();
    std::printf("STREAMCHECK_DONE hard_errors=%d soft_failures=%d\n", hard, soft);
    std::fflush(stdout);
    return hard == 0 ? 0 : 1;
}

}  // namespace sc
