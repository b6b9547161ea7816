/*
 * fakeapp.c: a "CUDA program" that runs on the fake CUPTI library, for the
 * shim's tests. Each fake API function below does what the CUDA runtime and
 * driver do as seen through CUPTI: runtime enter, driver enter, the work
 * (filling output parameters), driver exit, runtime exit.
 *
 * usage: fakeapp basic|threads|fork|abort|kill|bench|churn|aggregate|slots|loop|reuse|ipc|gpa
 *        (and "case", built with -DFAKE_CASE: see one_case)
 *   FAKE_INJECT=path  dlopen the shim and call InitializeInjection first,
 *                     as the driver does for CUDA_INJECTION64_PATH
 *   FAKE_LOG=path     write "name value" lines (addresses, handles, pids)
 *                     for the test to compare the trace against
 *   FAKE_CLOSE_STDOUT=1  start with stdout closed
 * stdout gets one line per scenario; the exit status is 7 (basic) so the
 * test can see that neither was changed by the shim.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fakecuda.h"

int fk_enabled(int domain, const char *name);

static FILE *logf_;
static int stdout_closed; /* FAKE_CLOSE_STDOUT=1: basic checks that fd 1 stays closed */
static void logv(const char *name, unsigned long long v) {
    if (logf_) {
        fprintf(logf_, "%s 0x%llx\n", name, v);
        fflush(logf_);
    }
}

/* ---- fake driver functions: enter, work, exit ---- */

static CUresult d_stream_create(const char *name, CUstream *ph, unsigned flags, CUstream value) {
    cuStreamCreate_params p = {ph, flags};
    fk_driver_enter(name, &p, NULL);
    *ph = value;
    fk_driver_exit(name, &p, 0, NULL);
    return 0;
}
/* Used by the cases only. */
__attribute__((unused)) static CUresult d_stream_create_prio(CUstream *ph, unsigned flags, int prio, CUstream value) {
    cuStreamCreateWithPriority_params p = {ph, flags, prio};
    fk_driver_enter("cuStreamCreateWithPriority", &p, NULL);
    *ph = value;
    fk_driver_exit("cuStreamCreateWithPriority", &p, 0, NULL);
    return 0;
}
static CUresult d_stream1(const char *name, CUstream s, CUresult r) { /* any (hStream) function */
    cuStreamSynchronize_params p = {s};
    fk_driver_enter(name, &p, NULL);
    fk_driver_exit(name, &p, r, NULL);
    return r;
}
/* Any (hEvent) function; used by the cases only. */
__attribute__((unused)) static CUresult d_event1(const char *name, CUevent e, CUresult r) {
    cuEventQuery_params p = {e};
    fk_driver_enter(name, &p, NULL);
    fk_driver_exit(name, &p, r, NULL);
    return r;
}
static CUresult d_malloc_async(const char *name, CUdeviceptr *dp, size_t n, CUstream s) {
    cuMemAllocAsync_params p = {dp, n, s};
    fk_driver_enter(name, &p, NULL);
    CUresult r = n > (1ull << 40) ? 2 /* CUDA_ERROR_OUT_OF_MEMORY */ : 0;
    if (r == 0) *dp = fk_device_alloc(n);
    fk_driver_exit(name, &p, r, NULL);
    return r;
}
static CUresult d_free_async(const char *name, CUdeviceptr d, CUstream s) {
    cuMemFreeAsync_params p = {d, s};
    fk_driver_enter(name, &p, NULL);
    fk_driver_exit(name, &p, 0, NULL);
    return 0;
}
static CUresult d_launch(const char *name, CUfunction f, const char *sym, CUstream s, void **args) {
    cuLaunchKernel_params p = {f, 1, 1, 1, 32, 1, 1, 0, s, args, NULL};
    fk_driver_enter(name, &p, sym);
    fk_driver_exit(name, &p, 0, sym);
    return 0;
}

/* ---- the allocation families, as the driver sees them ----
 * Each calls the driver function (its parameters as CUDA 13 lays them
 * out), fills what the driver returns when r is 0, and returns r: a case
 * says which calls CUDA rejects. Unused outside the cases. */

#define FAMILY_FN __attribute__((unused)) static

/* A driver call whose parameters the case fills, returning r. */
FAMILY_FN CUresult d_call(const char *name, void *params, CUresult r) {
    fk_driver_enter(name, params, NULL);
    fk_driver_exit(name, params, r, NULL);
    return r;
}

/* A driver call that returns device memory of n bytes in *dp. */
static CUresult device_alloc(const char *name, void *params, CUdeviceptr *dp, size_t n, CUresult r) {
    fk_driver_enter(name, params, NULL);
    if (r == 0) *dp = fk_device_alloc(n);
    fk_driver_exit(name, params, r, NULL);
    return r;
}
FAMILY_FN CUresult d_malloc(CUdeviceptr *dp, size_t n, CUresult r) {
    cuMemAlloc_v2_params p = {dp, n};
    return device_alloc("cuMemAlloc_v2", &p, dp, n, r);
}
FAMILY_FN CUresult d_malloc_managed(CUdeviceptr *dp, size_t n, unsigned flags, CUresult r) {
    cuMemAllocManaged_params p = {dp, n, flags};
    return device_alloc("cuMemAllocManaged", &p, dp, n, r);
}
/* Rows of width bytes padded to a pitch of 512. */
FAMILY_FN CUresult d_malloc_pitch(CUdeviceptr *dp, size_t *pitch, size_t width, size_t height, CUresult r) {
    cuMemAllocPitch_v2_params p = {dp, pitch, width, height, 4};
    *pitch = (width + 511) / 512 * 512;
    return device_alloc("cuMemAllocPitch_v2", &p, dp, *pitch * height, r);
}
FAMILY_FN CUresult d_free(CUdeviceptr d, CUresult r) {
    cuMemFree_v2_params p = {d};
    return d_call("cuMemFree_v2", &p, r);
}

/* Fake pinned host memory: addresses no other memory uses, never touched. */
static uint64_t host_next = 0x7e1000000000ull;
static CUresult pinned_alloc(const char *name, void *params, void **pp, size_t n, CUresult r) {
    fk_driver_enter(name, params, NULL);
    if (r == 0) {
        *pp = (void *)(uintptr_t)host_next;
        host_next += (n + 4095) / 4096 * 4096;
        fk_register_pinned(*pp, n);
    }
    fk_driver_exit(name, params, r, NULL);
    return r;
}
FAMILY_FN CUresult d_malloc_host(void **pp, size_t n, CUresult r) {
    cuMemAllocHost_v2_params p = {pp, n};
    return pinned_alloc("cuMemAllocHost_v2", &p, pp, n, r);
}
FAMILY_FN CUresult d_host_alloc(void **pp, size_t n, unsigned flags, CUresult r) {
    cuMemHostAlloc_params p = {pp, n, flags};
    return pinned_alloc("cuMemHostAlloc", &p, pp, n, r);
}
FAMILY_FN CUresult d_free_host(void *ptr, CUresult r) {
    cuMemFreeHost_params p = {ptr};
    return d_call("cuMemFreeHost", &p, r);
}
FAMILY_FN CUresult d_host_register(void *ptr, size_t n, unsigned flags, CUresult r) {
    cuMemHostRegister_v2_params p = {ptr, n, flags};
    fk_driver_enter("cuMemHostRegister_v2", &p, NULL);
    if (r == 0) fk_register_pinned(ptr, n);
    fk_driver_exit("cuMemHostRegister_v2", &p, r, NULL);
    return r;
}
FAMILY_FN CUresult d_host_unregister(void *ptr, CUresult r) {
    cuMemHostUnregister_params p = {ptr};
    return d_call("cuMemHostUnregister", &p, r);
}

/* ---- fake runtime functions ---- */

#define RT(name, call)                  \
    do {                                \
        fk_runtime_enter(name);         \
        CUresult r_ = (call);           \
        fk_runtime_exit(name, r_);      \
    } while (0)

static CUfunction K1 = (CUfunction)0x4b1000; /* a CUkernel handle, as <<<>>> passes */
static CUfunction K2 = (CUfunction)0x4b2000; /* a CUfunction handle, as CuPy passes */
static const char *K1NAME = "_Z6kernelPfS_4pairiPcd";

struct pair {
    int n;
    void *q; /* at offset 8: the struct is 16 bytes */
};

static void launch_k1(const char *rt, const char *drv, CUstream s, CUdeviceptr p, CUdeviceptr p2, char *host) {
    float *a = (float *)(uintptr_t)p, *b = (float *)(uintptr_t)(p + 256);
    struct pair pr = {3, (void *)(uintptr_t)(p2 + 8)};
    int seven = 7;
    double d = 3.5;
    void *args[] = {&a, &b, &pr, &seven, &host, &d};
    if (rt)
        RT(rt, d_launch(drv, K1, K1NAME, s, args));
    else
        d_launch(drv, K1, K1NAME, s, args);
}

static CUfunction K4 = (CUfunction)0x4b4000; /* takes an 8 KiB table by value */
static CUfunction K5 = (CUfunction)0x4b5000; /* add(float *a, const float *b, int n), as bench/gpu/loop.cu */
static CUfunction K7 = (CUfunction)0x4b7000; /* copy(T *out, CArray in): a pointer and a 32-byte descriptor */

static void register_kernels(void) {
    static const size_t k4[] = {8, 8192, 16};
    fk_register_kernel(K4, 1, 3, k4);
    static const size_t k1[] = {8, 8, 16, 4, 8, 8};
    fk_register_kernel(K1, 0, 6, k1);
    static const size_t k2[] = {8, 4, 8};
    fk_register_kernel(K2, 1, 3, k2);
    static const size_t k5[] = {8, 8, 4};
    fk_register_kernel(K5, 0, 3, k5);
    static const size_t k7[] = {8, 32};
    fk_register_kernel(K7, 1, 2, k7);
    fk_set_kernel_name(K1, K1NAME);
    fk_set_kernel_name(K2, "k2");
}

/* ---- scenarios ---- */

/* The calls of a small program, for the tests of what is true of every
 * call whatever its API (testdata/cases/ has each API's own): the program
 * is unchanged by the shim (its output, exit status and errno), the trace
 * is complete, written by the main thread, with stacks that start in the
 * program. */
/* FAKE_IDLE_MS: a stretch with no CUDA call, as a JIT compiler's warm-up is
 * (Jitify's takes minutes); the shim's threads must sleep through it. */
static void idle_stretch(void) {
    const char *v = getenv("FAKE_IDLE_MS");
    long ms = v ? atol(v) : 0;
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (ms > 0 && nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
}

static int basic(void) {
    CUstream s1;
    CUdeviceptr p, p2;

    RT("cudaStreamCreate_v3020", d_stream_create("cuStreamCreate", &s1, 0, (CUstream)0x510000));
    RT("cudaMallocAsync_v11020", d_malloc_async("cuMemAllocAsync", &p, 1024, s1));
    {
        cuMemAlloc_v2_params a = {&p2, 4096};
        fk_runtime_enter("cudaMalloc_v3020");
        fk_driver_enter("cuMemAlloc_v2", &a, NULL);
        p2 = fk_device_alloc(4096);
        fk_driver_exit("cuMemAlloc_v2", &a, 0, NULL);
        fk_runtime_exit("cudaMalloc_v3020", 0);
    }
    if (stdout_closed) { /* the shim has loaded and written: it must not hold fd 1 */
        int saved = errno, open_ = 1;
        char what[256] = "";
        /* Only a descriptor that stays open counts, not one the shim opens
         * for a moment (on a thread of its own, say). */
        for (int i = 0; i < 20 && open_; i++) {
            open_ = fcntl(1, F_GETFD) != -1;
            if (open_) {
                ssize_t n = readlink("/proc/self/fd/1", what, sizeof what - 1);
                what[n > 0 ? n : 0] = 0;
                usleep(5000);
            }
        }
        if (open_) fprintf(stderr, "fakeapp: fd 1 was open: %s\n", what);
        errno = saved;
    }
    logv("s1", (uintptr_t)s1);
    logv("p", p);
    logv("p2", p2);
    launch_k1("cudaLaunchKernel_v7000", "cuLaunchKernel", s1, p, p2, NULL);
    idle_stretch();
    RT("cudaFreeAsync_v11020", d_free_async("cuMemFreeAsync", p, s1));
    /* errno must come back as the program left it. */
    errno = 4242;
    RT("cudaStreamDestroy_v5050", d_stream1("cuStreamDestroy_v2", s1, 0));
    int e1 = errno;
    {
        cuMemFree_v2_params a = {p2};
        fk_runtime_enter("cudaFree_v3020");
        fk_driver_enter("cuMemFree_v2", &a, NULL);
        fk_driver_exit("cuMemFree_v2", &a, 0, NULL);
        fk_runtime_exit("cudaFree_v3020", 0);
    }
    fprintf(stderr, "enabled: cuMemAlloc=%d cudaGetDevice=%d cuLaunchKernel=%d cudaMallocAsync=%d cuMemAllocHost=%d "
                    "cuMemAllocHost_v2=%d\n",
            fk_enabled(1, "cuMemAlloc"), fk_enabled(2, "cudaGetDevice_v3020"), fk_enabled(1, "cuLaunchKernel"),
            fk_enabled(2, "cudaMallocAsync_v11020"), fk_enabled(1, "cuMemAllocHost"), fk_enabled(1, "cuMemAllocHost_v2"));
    printf("fakeapp: basic done, errno %s\n", e1 == 4242 ? "kept" : "CHANGED");
    return 7;
}

/* ---- ipc: the calls of a program that shares a pool, an allocation, an
 * event and cudaMalloc memory with another process, both sides in one
 * process (the fake driver hands out what the other side would get) ---- */

/* A driver call made inside the runtime function rt; between the
 * callbacks, fill runs (the driver's work) unless the call fails. */
#define IPC_CALL(rt, drv, params, result, fill) \
    do {                                        \
        fk_runtime_enter(rt);                   \
        fk_driver_enter(drv, params, NULL);     \
        if ((result) == 0) { fill; }            \
        fk_driver_exit(drv, params, result, NULL); \
        fk_runtime_exit(rt, result);            \
    } while (0)

static void malloc_at(CUdeviceptr want, CUdeviceptr *got);

static int ipc(void) {
    CUstream s = (CUstream)0xc20000;
    CUmemoryPool pool = (CUmemoryPool)0xb0020000, imported = NULL;
    CUdeviceptr p, q = 0, m = 0, mq = 0;
    CUevent e = (CUevent)0xe20000, eo = NULL;
    RT("cudaStreamCreate_v3020", d_stream_create("cuStreamCreate", &s, 0, s));
    int fd = -1;
    cuMemPoolExportToShareableHandle_params pe = {&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0};
    IPC_CALL("cudaMemPoolExportToShareableHandle_v11020", "cuMemPoolExportToShareableHandle", &pe, 0, fd = 9);
    {
        cuMemAllocFromPoolAsync_params a = {&p, 4096, pool, s};
        fk_driver_enter("cuMemAllocFromPoolAsync", &a, NULL);
        p = fk_device_alloc(4096);
        fk_driver_exit("cuMemAllocFromPoolAsync", &a, 0, NULL);
    }
    logv("p", p);
    CUmemPoolPtrExportData data;
    cuMemPoolExportPointer_params xp = {&data, p};
    IPC_CALL("cudaMemPoolExportPointer_v11020", "cuMemPoolExportPointer", &xp, 0,
             for (int i = 0; i < 64; i++) data.reserved[i] = (unsigned char)(i * 7 + 1));
    /* The importing side: the pool from the descriptor, then the pointer. */
    cuMemPoolImportFromShareableHandle_params pi = {&imported, (void *)(uintptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0};
    IPC_CALL("cudaMemPoolImportFromShareableHandle_v11020", "cuMemPoolImportFromShareableHandle", &pi, 0,
             imported = (CUmemoryPool)0xb0030000);
    CUmemPoolPtrExportData copy = data; /* as it arrives over a socket */
    cuMemPoolImportPointer_params ip = {&q, imported, &copy};
    CUdeviceptr qv = fk_device_alloc(8192);
    fk_set_memory_device(qv, 8192, 0); /* the driver knows the mapping's size */
    IPC_CALL("cudaMemPoolImportPointer_v11020", "cuMemPoolImportPointer", &ip, 0, q = qv);
    logv("q", q);
    CUdeviceptr bad = 0;
    cuMemPoolImportPointer_params ipbad = {&bad, imported, &copy};
    IPC_CALL("cudaMemPoolImportPointer_v11020", "cuMemPoolImportPointer", &ipbad, 1, bad = 1); /* failed: no address */
    {
        CUdeviceptr in = q + 4096; /* an interior pointer of the imported range */
        int n = 1;
        void *args[] = {&in, &n, &p};
        d_launch("cuLaunchKernel", K2, "k2", s, args);
    }
    /* IPC events: the exporter's handle, the importer's new event. */
    CUipcEventHandle eh;
    cuIpcGetEventHandle_params ge = {&eh, e};
    IPC_CALL("cudaIpcGetEventHandle_v4010", "cuIpcGetEventHandle", &ge, 0, memset(eh.reserved, 0x5a, 64));
    cuIpcOpenEventHandle_params oe = {&eo, eh};
    IPC_CALL("cudaIpcOpenEventHandle_v4010", "cuIpcOpenEventHandle", &oe, 0, eo = (CUevent)0xe30000);
    /* Legacy IPC of cudaMalloc memory. */
    malloc_at(fk_device_alloc(4096), &m);
    logv("m", m);
    CUipcMemHandle mh;
    cuIpcGetMemHandle_params gm = {&mh, m};
    IPC_CALL("cudaIpcGetMemHandle_v4010", "cuIpcGetMemHandle", &gm, 0, memset(mh.reserved, 0x33, 64));
    CUdeviceptr mv = fk_device_alloc(2048);
    fk_set_memory_device(mv, 2048, 0);
    cuIpcOpenMemHandle_v2_params om = {&mq, mh, 1};
    IPC_CALL("cudaIpcOpenMemHandle_v4010", "cuIpcOpenMemHandle_v2", &om, 0, mq = mv);
    logv("mq", mq);
    cuIpcCloseMemHandle_params cm = {mq};
    IPC_CALL("cudaIpcCloseMemHandle_v4010", "cuIpcCloseMemHandle", &cm, 0, (void)0);
    printf("fakeapp: ipc done\n");
    return 0;
}

/* ---- reuse: a thread gets an address or handle back from the driver while
 * the free or destroy that gave it back is still in its exit callback ---- */

static CUdeviceptr reuse_p;
static CUstream reuse_s = (CUstream)0x710000;
static CUevent reuse_e = (CUevent)0xe70000;
static _Atomic int reuse_step; /* the releases whose driver work is done */

/* Gives the thing back (the enter callback, then "the driver's work"), lets
 * the main thread take it, and only then runs the exit callback. */
static void release_slowly(const char *rt, const char *drv, void *params, int step) {
    fk_runtime_enter(rt);
    fk_driver_enter(drv, params, NULL);
    atomic_store(&reuse_step, step);
    usleep(50000); /* the exit callback comes late, as after a long unwind */
    fk_driver_exit(drv, params, 0, NULL);
    fk_runtime_exit(rt, 0);
}

static void *reuse_releaser(void *arg) {
    (void)arg;
    cuMemFree_v2_params f = {reuse_p};
    release_slowly("cudaFree_v3020", "cuMemFree_v2", &f, 1);
    cuStreamDestroy_v2_params sd = {reuse_s};
    release_slowly("cudaStreamDestroy_v5050", "cuStreamDestroy_v2", &sd, 2);
    cuEventDestroy_v2_params ed = {reuse_e};
    release_slowly("cudaEventDestroy_v3020", "cuEventDestroy_v2", &ed, 3);
    return NULL;
}

static void wait_step(int step) {
    while (atomic_load(&reuse_step) < step) usleep(1000);
}

/* A runtime call whose driver call hands back value in *out. */
#define RETURNING(rt, drv, params, out, value) \
    do {                                       \
        fk_runtime_enter(rt);                  \
        fk_driver_enter(drv, params, NULL);    \
        *(out) = (value);                      \
        fk_driver_exit(drv, params, 0, NULL);  \
        fk_runtime_exit(rt, 0);                \
    } while (0)

static void malloc_at(CUdeviceptr want, CUdeviceptr *got) {
    cuMemAlloc_v2_params a = {got, 4096};
    RETURNING("cudaMalloc_v3020", "cuMemAlloc_v2", &a, got, want);
}

static void event_create_at(CUevent want, CUevent *got) {
    cuEventCreate_params a = {got, 0};
    RETURNING("cudaEventCreate_v3020", "cuEventCreate", &a, got, want);
}

static int reuse(void) {
    CUstream s;
    CUevent e;
    CUdeviceptr p;
    malloc_at(fk_device_alloc(4096), &reuse_p);
    RT("cudaStreamCreate_v3020", d_stream_create("cuStreamCreate", &s, 0, reuse_s));
    event_create_at(reuse_e, &e);
    logv("p", reuse_p);
    pthread_t t;
    pthread_create(&t, NULL, reuse_releaser, NULL);
    wait_step(1);
    malloc_at(reuse_p, &p); /* the same address, from the driver */
    wait_step(2);
    RT("cudaStreamCreate_v3020", d_stream_create("cuStreamCreate", &s, 0, reuse_s));
    wait_step(3);
    event_create_at(reuse_e, &e);
    pthread_join(t, NULL);
    printf("fakeapp: reuse done\n");
    return 0;
}

/* ---- many threads ---- */

#define NTHREADS 8
#define ITERS 200

static void *worker(void *arg) {
    int t = (int)(intptr_t)arg;
    CUstream s;
    char host[8];
    RT("cudaStreamCreate_v3020", d_stream_create("cuStreamCreate", &s, 0, (CUstream)(uintptr_t)(0x600000 + t * 0x100)));
    for (int i = 0; i < ITERS; i++) {
        CUdeviceptr p, p2;
        RT("cudaMallocAsync_v11020", d_malloc_async("cuMemAllocAsync", &p, 256, s));
        RT("cudaMallocAsync_ptsz_v11020", d_malloc_async("cuMemAllocAsync_ptsz", &p2, 64, 0));
        launch_k1("cudaLaunchKernel_v7000", "cuLaunchKernel", s, p, p2, host);
        RT("cudaFreeAsync_v11020", d_free_async("cuMemFreeAsync", p, s));
        RT("cudaFreeAsync_ptsz_v11020", d_free_async("cuMemFreeAsync_ptsz", p2, 0));
    }
    return NULL;
}

static int threads(void) {
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++) pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < NTHREADS; t++) pthread_join(th[t], NULL);
    printf("fakeapp: threads done\n");
    return 0;
}

/* ---- fork: the child records into its own trace ---- */

static int forking(void) {
    CUstream s1;
    CUdeviceptr p, c;
    char host[8];
    RT("cudaStreamCreate_v3020", d_stream_create("cuStreamCreate", &s1, 0, (CUstream)0x710000));
    RT("cudaMallocAsync_v11020", d_malloc_async("cuMemAllocAsync", &p, 1024, s1));
    logv("parent", (unsigned long long)getpid());
    logv("p", p);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        RT("cudaMallocAsync_v11020", d_malloc_async("cuMemAllocAsync", &c, 64, s1));
        logv("c", c);
        launch_k1("cudaLaunchKernel_v7000", "cuLaunchKernel", s1, c, p, host);
        RT("cudaFreeAsync_v11020", d_free_async("cuMemFreeAsync", c, s1));
        exit(0);
    }
    logv("child", (unsigned long long)pid);
    int st;
    waitpid(pid, &st, 0);
    RT("cudaFreeAsync_v11020", d_free_async("cuMemFreeAsync", p, s1));
    printf("fakeapp: fork done, child %s\n", WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" : "FAILED");
    return 0;
}

/* ---- many frees: the recently-freed ring of the shim's allocation map ---- */

static void alloc_at(CUdeviceptr addr, size_t n, CUstream s) {
    CUdeviceptr p;
    cuMemAllocAsync_params a = {&p, n, s};
    fk_runtime_enter("cudaMallocAsync_v11020");
    fk_driver_enter("cuMemAllocAsync", &a, NULL);
    p = addr; /* a pool handing out an address it chose */
    fk_driver_exit("cuMemAllocAsync", &a, 0, NULL);
    fk_runtime_exit("cudaMallocAsync_v11020", 0);
}

static void launch2(CUstream s, CUdeviceptr x, CUdeviceptr y) {
    void *px = (void *)(uintptr_t)x, *py = (void *)(uintptr_t)y;
    unsigned char buf[16];
    memcpy(buf, &px, 8);
    memcpy(buf + 8, &py, 8);
    size_t len = sizeof buf;
    /* no layout for this handle: the whole "extra" buffer is scanned */
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &len, CU_LAUNCH_PARAM_END};
    cuLaunchKernel_params p = {(CUfunction)0x4b3000, 1, 1, 1, 1, 1, 1, 0, s, NULL, extra};
    fk_driver_enter("cuLaunchKernel", &p, "k3");
    fk_driver_exit("cuLaunchKernel", &p, 0, "k3");
}

static int churn(void) {
    CUstream s;
    const CUdeviceptr base = 0x7e0000000000ull, x = 0x7d0000000000ull;
    RT("cudaStreamCreate_v3020", d_stream_create("cuStreamCreate", &s, 0, (CUstream)0xa10000));
    for (int i = 0; i < 6000; i++) {
        alloc_at(base + (CUdeviceptr)i * 0x1000, 0x1000, s);
        RT("cudaFreeAsync_v11020", d_free_async("cuMemFreeAsync", base + (CUdeviceptr)i * 0x1000, s));
    }
    launch2(s, base, base + 5999 * 0x1000ull); /* the first free is forgotten, the last is not */
    for (int k = 0; k < 2; k++) { /* one range freed twice */
        alloc_at(x, 0x1000, s);
        RT("cudaFreeAsync_v11020", d_free_async("cuMemFreeAsync", x, s));
    }
    for (int i = 0; i < 4094; i++) {
        alloc_at(base + (CUdeviceptr)(6000 + i) * 0x1000, 0x1000, s);
        RT("cudaFreeAsync_v11020", d_free_async("cuMemFreeAsync", base + (CUdeviceptr)(6000 + i) * 0x1000, s));
    }
    launch2(s, x + 8, 0); /* x's first free has left the ring, its second not */
    for (int i = 0; i < 10; i++) {
        alloc_at(base + (CUdeviceptr)(20000 + i) * 0x1000, 0x1000, s);
        RT("cudaFreeAsync_v11020", d_free_async("cuMemFreeAsync", base + (CUdeviceptr)(20000 + i) * 0x1000, s));
    }
    launch2(s, x + 8, 0); /* now x is forgotten too */
    printf("fakeapp: churn done\n");
    return 0;
}

/* ---- pointers in a large by-value table (PyTorch's multi-tensor apply) ---- */

static int aggregate(void) {
    CUstream s;
    const CUdeviceptr live = 0x7c0000000000ull, freed = 0x7c0000100000ull, live2 = 0x7c0000200000ull,
                      freed2 = 0x7c0000300000ull, live3 = 0x7c0000400000ull;
    RT("cudaStreamCreate_v3020", d_stream_create("cuStreamCreate", &s, 0, (CUstream)0xb10000));
    alloc_at(live, 0x1000, s);
    alloc_at(live2, 0x1000, s);
    alloc_at(live3, 0x1000, s);
    alloc_at(freed, 0x1000, s);
    RT("cudaFreeAsync_v11020", d_free_async("cuMemFreeAsync", freed, s));
    alloc_at(freed2, 0x1000, s);
    RT("cudaFreeAsync_v11020", d_free_async("cuMemFreeAsync", freed2, s));
    void *a = (void *)(uintptr_t)live;
    /* 8 KiB, more words than the shim looks up at once: live entries, a
     * stale one, and a live one past the first 512 words */
    uint64_t table[1024] = {0};
    table[0] = live2;
    table[100] = freed;
    table[700] = live3;
    struct pair small = {1, (void *)(uintptr_t)freed2}; /* small: a freed pointer counts */
    void *args[] = {&a, table, &small};
    cuLaunchKernel_params p = {K4, 1, 1, 1, 1, 1, 1, 0, s, args, NULL};
    fk_driver_enter("cuLaunchKernel", &p, "k4");
    fk_driver_exit("cuLaunchKernel", &p, 0, "k4");
    /* A table full of words within the map's bounds, more than one chunk of
     * lookups (interior pointers, stale entries, words in gaps), in
     * descending order here and there: found once each, sorted. */
    for (int i = 0; i < 1024; i++) {
        switch (i % 4) {
        case 0: table[i] = live3 + (uint64_t)(1023 - i); break;  /* counts */
        case 1: table[i] = freed + (uint64_t)i; break;           /* stale: does not */
        case 2: table[i] = live2 + 8 * (uint64_t)(i % 16); break; /* counts */
        case 3: table[i] = live + 0x80000 + (uint64_t)i; break;  /* in a gap */
        }
    }
    small.q = NULL; /* only the table's words this time */
    fk_driver_enter("cuLaunchKernel", &p, "k4");
    fk_driver_exit("cuLaunchKernel", &p, 0, "k4");
    printf("fakeapp: aggregate done\n");
    return 0;
}

/* ---- pointer slots and weak words (CuPy's array descriptors) ---- */

/* A CArray-like descriptor: the data pointer first, then metadata; the
 * host left the rest of the declared 32 bytes as the heap had them. */
struct carray {
    uint64_t data, size, stale, pad;
};

static int slots(void) {
    CUstream s;
    const CUdeviceptr out = 0x7b0000000000ull, in = 0x7b0000100000ull, freed = 0x7b0000200000ull;
    RT("cudaStreamCreate_v3020", d_stream_create("cuStreamCreate", &s, 0, (CUstream)0xb20000));
    alloc_at(out, 0x1000, s);
    alloc_at(in, 0x1000, s);
    alloc_at(freed, 0x1000, s);
    RT("cudaFreeAsync_v11020", d_free_async("cuMemFreeAsync", freed, s));
    void *o = (void *)(uintptr_t)out;
    struct carray desc = {in, 16, freed, 0};
    void *args[] = {&o, &desc};
    cuLaunchKernel_params p = {K7, 1, 1, 1, 1, 1, 1, 0, s, args, NULL};
    /* out and in from slots (strong), the freed address from word 2 (weak) */
    fk_driver_enter("cuLaunchKernel", &p, "k7");
    fk_driver_exit("cuLaunchKernel", &p, 0, "k7");
    /* the freed address in a slot too, and in word 3 as well: strong once */
    o = (void *)(uintptr_t)freed;
    desc.pad = freed + 8;
    fk_driver_enter("cuLaunchKernel", &p, "k7");
    fk_driver_exit("cuLaunchKernel", &p, 0, "k7");
    /* the same words in a buffer of a handle with no layout: all slots */
    launch2(s, freed + 16, in);
    printf("fakeapp: slots done\n");
    return 0;
}

/* ---- a crash in the middle ---- */

static int crash(int sig) {
    CUstream s1;
    CUdeviceptr p;
    char host[8];
    RT("cudaStreamCreate_v3020", d_stream_create("cuStreamCreate", &s1, 0, (CUstream)0x810000));
    RT("cudaMallocAsync_v11020", d_malloc_async("cuMemAllocAsync", &p, 1024, s1));
    logv("p", p);
    launch_k1("cudaLaunchKernel_v7000", "cuLaunchKernel", s1, p, p, host);
    printf("fakeapp: about to die\n");
    fflush(stdout);
    if (sig == SIGABRT) abort();
    raise(sig);
    return 0;
}

/* ---- cost per recorded call: a launch-bound loop ---- */

static double now_s(void) { /* thread CPU time: steady on a loaded machine */
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) static void bench_level(int depth, int iters, CUstream s, CUdeviceptr p, char *host) {
    if (depth > 0) {
        bench_level(depth - 1, iters, s, p, host);
        __asm__ volatile("" ::: "memory"); /* keep the frame: no tail call */
        return;
    }
    for (int i = 0; i < iters; i++) launch_k1("cudaLaunchKernel_v7000", "cuLaunchKernel", s, p, p, host);
}

/* Many distinct call stacks, as a PyTorch program has: site s calls from
 * recursion depth s % SITE_DEPTHS through leaf s / SITE_DEPTHS. */
#define SITE_DEPTHS 24
#define SITE_LEAVES 4
typedef void (*leaf_fn)(CUstream, CUdeviceptr, char *);
#define LEAF(name)                                                                             \
    __attribute__((noinline)) static void name(CUstream s, CUdeviceptr p, char *host) {        \
        launch_k1("cudaLaunchKernel_v7000", "cuLaunchKernel", s, p, p, host);                  \
        __asm__ volatile("" ::: "memory");                                                     \
    }
LEAF(leaf0)
LEAF(leaf1)
LEAF(leaf2)
LEAF(leaf3)
static const leaf_fn leaves[SITE_LEAVES] = {leaf0, leaf1, leaf2, leaf3};

__attribute__((noinline)) static void site_level(int depth, int leaf, CUstream s, CUdeviceptr p, char *host) {
    if (depth > 0) {
        site_level(depth - 1, leaf, s, p, host);
        __asm__ volatile("" ::: "memory");
        return;
    }
    leaves[leaf](s, p, host);
}

/* warm calls, then iters timed ones, all from the same stacks; returns the
 * CPU seconds of the timed ones. */
static double sites_loop(int sites, int warm, int iters, CUstream s, CUdeviceptr p, char *host) {
    double t0 = 0;
    for (int i = 0; i < warm + iters; i++) {
        if (i == warm) t0 = now_s();
        int k = i % sites;
        site_level(k % SITE_DEPTHS, k / SITE_DEPTHS, s, p, host);
    }
    return now_s() - t0;
}

/* FAKE_SITES=n (at most SITE_DEPTHS * SITE_LEAVES): launch from n distinct
 * call stacks in turn instead of one. */
static int bench(void) {
    CUstream s;
    CUdeviceptr p;
    char host[8];
    RT("cudaStreamCreate_v3020", d_stream_create("cuStreamCreate", &s, 0, (CUstream)0x910000));
    static CUdeviceptr q[1000];
    for (int i = 0; i < 1000; i++) /* a realistic allocation map */
        RT("cudaMallocAsync_v11020", d_malloc_async("cuMemAllocAsync", &q[i], 4096, s));
    RT("cudaMallocAsync_v11020", d_malloc_async("cuMemAllocAsync", &p, 4096, s));
    const char *it = getenv("FAKE_ITERS");
    int iters = it ? atoi(it) : 200000;
    const char *st = getenv("FAKE_SITES");
    int sites = st ? atoi(st) : 0;
    if (sites > SITE_DEPTHS * SITE_LEAVES) sites = SITE_DEPTHS * SITE_LEAVES;
    if (sites > 0) {
        double dt = sites_loop(sites, 10 * sites, iters, s, p, host);
        fprintf(stderr, "bench: %.0f ns (CPU) per launch from %d call stacks\n", dt / iters * 1e9, sites);
        printf("fakeapp: bench done\n");
        return 0;
    }
    const char *tb = getenv("FAKE_TABLE");
    if (tb && *tb) { /* FAKE_TABLE=n: launch K4, its 8 KiB table holding n device addresses */
        static uint64_t table[1024];
        int n = atoi(tb);
        for (int i = 0; i < n && i < 1024; i++) table[i] = q[(i * 37) % 1000] + 8 * (i % 4);
        void *a = (void *)(uintptr_t)p;
        struct pair small = {1, NULL};
        void *args[] = {&a, table, &small};
        cuLaunchKernel_params lp = {K4, 1, 1, 1, 1, 1, 1, 0, s, args, NULL};
        double t0 = 0;
        for (int i = 0; i < 1000 + iters; i++) {
            if (i == 1000) t0 = now_s();
            fk_driver_enter("cuLaunchKernel", &lp, "k4");
            fk_driver_exit("cuLaunchKernel", &lp, 0, "k4");
        }
        fprintf(stderr, "bench: %.0f ns (CPU) per launch of a table of %d addresses\n", (now_s() - t0) / iters * 1e9, n);
        printf("fakeapp: bench done\n");
        return 0;
    }
    bench_level(20, 1000, s, p, host); /* warm up */
    double t0 = now_s();
    bench_level(20, iters, s, p, host); /* ~25 frames below the call, like a real program */
    double dt = now_s() - t0;
    fprintf(stderr, "bench: %.0f ns (CPU) per launch\n", dt / iters * 1e9);
    printf("fakeapp: bench done\n");
    return 0;
}

/* ---- fork while other threads record: the forking thread's errno ---- */

/* The fork handlers take the shim's locks outside any callback; while other
 * threads hold them, taking them must not change the program's errno. */
static _Atomic int fe_stop;
static void *fe_worker(void *arg) {
    CUstream s;
    char host[8];
    d_stream_create("cuStreamCreate", &s, 0, (CUstream)(0x55d3c0f00000 + (uintptr_t)arg * 0x100));
    while (!atomic_load(&fe_stop)) {
        CUdeviceptr p;
        d_malloc_async("cuMemAllocAsync", &p, 256, s);
        launch_k1(NULL, "cuLaunchKernel", s, p, p, host);
        d_free_async("cuMemFreeAsync", p, s);
    }
    return NULL;
}

static int fork_errno(void) {
    enum { WORKERS = 4, FORKS = 2000 };
    pthread_t th[WORKERS];
    for (int i = 0; i < WORKERS; i++) pthread_create(&th[i], NULL, fe_worker, (void *)(uintptr_t)i);
    int changed = 0, last = 0;
    for (int i = 0; i < FORKS; i++) {
        errno = 0;
        pid_t pid = fork();
        int e = errno;
        if (pid == 0) _exit(0);
        if (pid > 0 && e) changed++, last = e;
        if (pid > 0) waitpid(pid, NULL, 0);
    }
    atomic_store(&fe_stop, 1);
    for (int i = 0; i < WORKERS; i++) pthread_join(th[i], NULL);
    printf("fakeapp: %d of %d forks changed errno (last %d)\n", changed, FORKS, last);
    return 0;
}

/* ---- the GPU benchmark's loop (bench/gpu/loop.cu), for the shim's cost per call ---- */

/* The pool hands out the range the last iteration freed, as the real one does. */
static CUdeviceptr loop_pool;

/* FAKE_THRASH=KiB: read that much memory before each call, as a real
 * driver's own work does, so the shim's data is not all in the CPU's
 * caches (0: off). Only the calls are timed, in TSC ticks, so the reading
 * does not blur the result. */
static volatile uint64_t *thrash_buf;
static size_t thrash_words, thrash_pos;
static uint64_t loop_ticks;
static void thrash(void) {
    uint64_t sum = 0;
    for (size_t i = 0; i < thrash_words; i += 8, thrash_pos += 8) {
        if (thrash_pos >= thrash_words * 16) thrash_pos = 0;
        sum += thrash_buf[thrash_pos];
    }
    if (sum == 1) printf("!");
}
/* FAKE_THRASH_CODE=KiB: run that much code before each call, one jump a
 * 64-byte line, as the real driver's own code does between our callbacks:
 * the shim's code is then out of the instruction cache and its branches out
 * of the predictors (0: off). */
static void (*code_thrash)(void);
static int make_code_thrash(size_t kib) {
    size_t size = kib << 10;
    uint8_t *m = mmap(NULL, size, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        fprintf(stderr, "fakeapp: FAKE_THRASH_CODE: cannot map executable memory: %s\n", strerror(errno));
        return 0;
    }
    for (size_t off = 0; off + 64 < size; off += 64) {
        m[off] = 0xeb; /* jmp rel8 to the next line */
        m[off + 1] = 62;
    }
    m[size - 64] = 0xc3; /* ret */
    code_thrash = (void (*)(void))m;
    return 1;
}
static inline uint64_t ticks(void) {
#if defined(__x86_64__)
    return __builtin_ia32_rdtsc();
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
#endif
}
#define TIMED(call)                     \
    do {                                \
        thrash();                       \
        if (code_thrash) code_thrash(); \
        uint64_t t0_ = ticks();         \
        call;                           \
        loop_ticks += ticks() - t0_;    \
    } while (0)

static void add_launch(CUstream s, CUdeviceptr a, CUdeviceptr b) {
    int n = 4096;
    void *args[] = {&a, &b, &n};
    cuLaunchKernel_params p = {K5, 16, 1, 1, 256, 1, 1, 0, s, args, NULL};
    fk_driver_enter("cuLaunchKernel", &p, "_Z3addPfPKfi");
    fk_driver_exit("cuLaunchKernel", &p, 0, "_Z3addPfPKfi");
}

static void pool_alloc(CUdeviceptr *a, CUstream s) {
    cuMemAllocAsync_params ma = {a, 1 << 16, s};
    fk_driver_enter("cuMemAllocAsync", &ma, NULL);
    *a = loop_pool;
    fk_driver_exit("cuMemAllocAsync", &ma, 0, NULL);
}

static void event_record(CUevent e, CUstream s) {
    cuEventRecord_params er = {e, s};
    fk_driver_enter("cuEventRecord", &er, NULL);
    fk_driver_exit("cuEventRecord", &er, 0, NULL);
}

static void stream_wait(CUstream s, CUevent e) {
    cuStreamWaitEvent_params sw = {s, e, 0};
    fk_driver_enter("cuStreamWaitEvent", &sw, NULL);
    fk_driver_exit("cuStreamWaitEvent", &sw, 0, NULL);
}

__attribute__((noinline)) static void loop_body(CUstream s1, CUstream s2, CUevent e, CUdeviceptr b) {
    CUdeviceptr a;
    TIMED(pool_alloc(&a, s1));
    TIMED(add_launch(s1, a, b));
    TIMED(add_launch(s1, a, b));
    TIMED(event_record(e, s1));
    TIMED(stream_wait(s2, e));
    TIMED(add_launch(s2, a, b));
    TIMED(d_free_async("cuMemFreeAsync", a, s2));
}

__attribute__((noinline)) static void loop_level(int depth, int iters, CUstream s1, CUstream s2, CUevent e,
                                                 CUdeviceptr b) {
    if (depth > 0) {
        loop_level(depth - 1, iters, s1, s2, e, b);
        __asm__ volatile("" ::: "memory"); /* keep the frame: no tail call */
        return;
    }
    for (int i = 0; i < iters; i++) loop_body(s1, s2, e, b);
}

/* FAKE_ITERS iterations of 7 driver calls (the GPU loop's, called the way
 * its static cudart calls them: no runtime-domain callbacks), from about 15
 * frames deep; prints the ns per call, measured around the calls only. */
static int loop(void) {
    CUstream s1, s2;
    /* Handles as a real driver's are (heap addresses): the shim's encoding
     * of an event costs by the length of its values. */
    CUevent e = (CUevent)0x55d3c0e50000;
    CUdeviceptr b;
    d_stream_create("cuStreamCreate", &s1, 1, (CUstream)0x55d3c0a10000);
    d_stream_create("cuStreamCreate", &s2, 1, (CUstream)0x55d3c0a20000);
    cuEventCreate_params ec = {&e, 2};
    fk_driver_enter("cuEventCreate", &ec, NULL);
    fk_driver_exit("cuEventCreate", &ec, 0, NULL);
    d_malloc_async("cuMemAllocAsync", &b, 1 << 20, s1);
    loop_pool = fk_device_alloc(1 << 16);
    const char *th = getenv("FAKE_THRASH");
    thrash_words = th ? (size_t)atoi(th) * 128 : 0;
    if (thrash_words) thrash_buf = calloc(thrash_words * 16, 8); /* cycled through, 16 times the amount */
    const char *tc = getenv("FAKE_THRASH_CODE");
    if (tc && atoi(tc) > 0 && !make_code_thrash((size_t)atoi(tc))) return 97; /* never measure without it silently */
    const char *it = getenv("FAKE_ITERS");
    int iters = it ? atoi(it) : 100000;
    loop_level(10, 1000, s1, s2, e, b); /* warm up */
    loop_ticks = 0;
    struct timespec a0, a1;
    clock_gettime(CLOCK_MONOTONIC, &a0);
    uint64_t k0 = ticks();
    loop_level(10, iters, s1, s2, e, b);
    uint64_t k1 = ticks();
    clock_gettime(CLOCK_MONOTONIC, &a1);
    double ns = (a1.tv_sec - a0.tv_sec) * 1e9 + (a1.tv_nsec - a0.tv_nsec);
    double ns_per_tick = ns / (double)(k1 - k0);
    fprintf(stderr, "bench: %.1f ns per call\n", (double)loop_ticks * ns_per_tick / iters / 7);
    printf("fakeapp: loop done\n");
    return 0;
}

#ifdef FAKE_CASE
/* Host memory at a fixed address, for the cases whose traces name host
 * pointers (the heap's addresses change from build to build). */
__attribute__((unused)) static char *host_at(uintptr_t addr, size_t n) {
    void *p = mmap((void *)addr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != (void *)addr) {
        perror("fakeapp: host_at");
        exit(97);
    }
    return p;
}

/* The program's host function and stream callback in the cases: each
 * counts its runs in its argument, keeps what it was passed, and makes a
 * driver call (a stream query), whose event must come after the run's. */
typedef struct {
    int runs;
    CUstream stream;
    CUresult status;
} app_hostfn_arg;
__attribute__((unused)) static void app_host_fn(void *p) {
    app_hostfn_arg *a = p;
    a->runs++;
    cuStreamQuery_params q = {a->stream};
    d_call("cuStreamQuery", &q, 0);
}
__attribute__((unused)) static void app_callback(CUstream s, CUresult status, void *p) {
    app_hostfn_arg *a = p;
    a->runs++;
    a->stream = s, a->status = status;
    cuStreamQuery_params q = {s};
    d_call("cuStreamQuery", &q, 0);
}

/* One case of TestShimCases (testdata/cases/NAME.txtar): its program.c, the
 * body of this function, is compiled in with -DFAKE_CASE='"path"' and run
 * as mode "case". It may use every helper above. */
static int one_case(void) {
#include FAKE_CASE
    return 0;
}
#endif

/* ---- gpa: what cuGetProcAddress answers, called as cudart calls it ---- */

CUresult fk_query_gpa(const char *symbol, void **pfn, int version, unsigned long long flags, int *status);
int fk_is_own(const char *name, void *fn);

/* Prints each query's result and status, and whether the entry point
 * handed out is the driver's own or another (a wrapper), and then calls
 * it: the driver checks that the call arrives as made. */
static int gpa_queries(void) {
    static const struct {
        const char *symbol, *variant;
        int version;
        unsigned long long flags;
    } q[] = {
        {"cuMemAllocAsync", "cuMemAllocAsync", 13000, 0},
        {"cuMemAllocAsync", "cuMemAllocAsync_ptsz", 13000, 2}, /* CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM */
        {"cuMemAllocAsync", "cuMemAllocAsync", 13000, 3},      /* with LEGACY_STREAM too: the legacy one */
        {"cuMemcpyBatchAsync", "cuMemcpyBatchAsync", 12080, 0},
        {"cuMemcpyBatchAsync", "cuMemcpyBatchAsync_v2", 13000, 0},
        {"cuMemcpyBatchAsync", NULL, 12000, 0},                /* too old a version */
        {"cuNoSuchFunction", NULL, 13000, 0},
        {"cuCtxGetCurrent", NULL, 13000, 0},                    /* one the fake does not hand out */
    };
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        void *fn = (void *)1;
        int status = -1;
        CUresult r = fk_query_gpa(q[i].symbol, &fn, q[i].version, q[i].flags, &status);
        printf("%s %d %#llx: result %d status %d entry %s\n", q[i].symbol, q[i].version, q[i].flags, r, status,
               !fn ? "none" : q[i].variant && fk_is_own(q[i].variant, fn) ? "own" : "other");
        if (r == 0 && fn && q[i].variant && strncmp(q[i].variant, "cuMemAllocAsync", 15) == 0) {
            CUdeviceptr p;
            cuMemAllocAsync_params a = {&p, 64, (CUstream)0x510000};
            p = fk_device_alloc(64);
            void fk_route_expect(const char *name, const void *params, CUresult result);
            fk_route_expect(q[i].variant, &a, 0);
            CUresult c = ((CUresult(*)(CUdeviceptr *, size_t, CUstream))fn)(&p, 64, (CUstream)0x510000);
            printf("  call: %d\n", c);
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *log = getenv("FAKE_LOG");
    if (log && *log) logf_ = fopen(log, "w");
    logv("pid", (unsigned long long)getpid());
    const char *cs = getenv("FAKE_CLOSE_STDOUT"); /* as `prog >&-` starts it */
    if (cs && strcmp(cs, "1") == 0) {
        close(1);
        stdout_closed = 1;
    }
    const char *inject = getenv("FAKE_INJECT");
    if (inject && *inject) {
        /* What the driver does at cuInit for CUDA_INJECTION64_PATH. */
        void *h = dlopen(inject, RTLD_NOW);
        int (*init)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
        if (!init) {
            fprintf(stderr, "fakeapp: cannot load %s: %s\n", inject, dlerror());
            return 99;
        }
        if (init() != 1) fprintf(stderr, "fakeapp: InitializeInjection did not return 1\n");
    }
    register_kernels();
    const char *mode = argc > 1 ? argv[1] : "basic";
    if (strcmp(mode, "basic") == 0) return basic();
    if (strcmp(mode, "threads") == 0) return threads();
    if (strcmp(mode, "fork") == 0) return forking();
    if (strcmp(mode, "forkerrno") == 0) return fork_errno();
    if (strcmp(mode, "abort") == 0) return crash(SIGABRT);
    if (strcmp(mode, "kill") == 0) return crash(SIGKILL);
    if (strcmp(mode, "bench") == 0) return bench();
    if (strcmp(mode, "loop") == 0) return loop();
    if (strcmp(mode, "churn") == 0) return churn();
    if (strcmp(mode, "aggregate") == 0) return aggregate();
    if (strcmp(mode, "slots") == 0) return slots();
    if (strcmp(mode, "reuse") == 0) return reuse();
    if (strcmp(mode, "ipc") == 0) return ipc();
    if (strcmp(mode, "gpa") == 0) return gpa_queries();
    if (strcmp(mode, "query") == 0) return fk_query() == 0 ? 0 : 1;
#ifdef FAKE_CASE
    if (strcmp(mode, "case") == 0) return one_case();
#endif
    fprintf(stderr, "fakeapp: unknown mode %s\n", mode);
    return 98;
}
