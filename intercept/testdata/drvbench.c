/*
 * drvbench.c: a program that calls the driver (thindrv.c, linked as its
 * libcuda) through the PLT, as a program linked against libcuda does, for
 * measuring what the shim preloaded with the interposition backend costs
 * it in memory and time. bench/shim-memory.sh and bench/shim-calls.sh run it,
 * with and without the shim.
 *
 * usage: drvbench threads N   N threads, each making ITERS iterations of the
 *                             loop below, all alive while the memory is read;
 *                             then read again once they have exited
 *        drvbench waves N     threads N eight times over, memory read after
 *                             the first and the last wave
 *        drvbench allocs N    N device allocations (cuMemAlloc_v2), all live
 *        drvbench churn N     N streams, events and allocations, each
 *                             created and destroyed (freed) at once
 *        drvbench calls N     N iterations of the loop, timed on the calling
 *                             thread's CPU clock
 *        drvbench launches N  N iterations of PyTorch-like launches among 2,000
 *                             live allocations: an elementwise kernel's
 *                             512-byte descriptor (3 pointers, then sizes and
 *                             strides) and, every fourth iteration, an
 *                             optimizer's 4 KiB table (96 tensor addresses,
 *                             then stale words of freed tensors and zeros);
 *                             timed per launch
 * The loop is bench/gpu/loop.cu's, five calls: an allocation, a launch, an
 * event record, a stream wait and a free.
 *
 * Memory is printed as "name KiB" lines from /proc/self/status (VmRSS,
 * RssAnon, RssFile, RssShmem) and /proc/self/smaps_rollup's Pss; time as
 * "ns/call X".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef uint64_t CUdeviceptr;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUfunc_st *CUfunction;

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n);
CUresult cuMemFree_v2(CUdeviceptr p);
CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream s);
CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s);
CUresult cuStreamCreate(CUstream *s, unsigned flags);
CUresult cuStreamDestroy_v2(CUstream s);
CUresult cuEventCreate(CUevent *e, unsigned flags);
CUresult cuEventDestroy_v2(CUevent e);
CUresult cuEventRecord(CUevent e, CUstream s);
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags);
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shmem, CUstream s, void **params, void **extra);

#define ITERS 100 /* iterations per thread in threads mode */

static void fail(const char *what) {
    fprintf(stderr, "drvbench: %s failed\n", what);
    exit(2);
}

/* One iteration of the loop on stream s, event e: five driver calls. */
static void loop_once(CUstream s, CUevent e) {
    static CUfunction add = (CUfunction)0x4b5000;
    CUdeviceptr a, b;
    if (cuMemAllocAsync(&a, 4096, s)) fail("cuMemAllocAsync");
    b = a + 1024;
    int n = 256;
    void *args[] = {&a, &b, &n};
    if (cuLaunchKernel(add, 1, 1, 1, 256, 1, 1, 0, s, args, NULL)) fail("cuLaunchKernel");
    if (cuEventRecord(e, s)) fail("cuEventRecord");
    if (cuStreamWaitEvent(s, e, 0)) fail("cuStreamWaitEvent");
    if (cuMemFreeAsync(a, s)) fail("cuMemFreeAsync");
}

/* Prints the process's memory, each line prefixed with tag. */
static void memory(const char *tag) {
    static const char *const keys[] = {"VmRSS:", "RssAnon:", "RssFile:", "RssShmem:"};
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) fail("/proc/self/status");
    while (fgets(line, sizeof line, f))
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            if (strncmp(line, keys[i], strlen(keys[i])) == 0) {
                long kib = atol(line + strlen(keys[i]));
                printf("%s %.*s %ld\n", tag, (int)strlen(keys[i]) - 1, keys[i], kib);
            }
    fclose(f);
    f = fopen("/proc/self/smaps_rollup", "r");
    if (f) {
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "Pss:", 4) == 0) printf("%s Pss %ld\n", tag, atol(line + 4));
        fclose(f);
    }
    fflush(stdout);
}

static pthread_barrier_t ready, done;

static void *worker(void *arg) {
    CUstream s;
    CUevent e;
    if (cuStreamCreate(&s, 0) || cuEventCreate(&e, 0)) fail("create");
    for (int i = 0; i < ITERS; i++) loop_once(s, e);
    pthread_barrier_wait(&ready); /* all alive: main reads the memory */
    pthread_barrier_wait(&done);
    if (cuEventDestroy_v2(e) || cuStreamDestroy_v2(s)) fail("destroy");
    return arg;
}

/* One wave of n threads; the memory is read (tagged alive and exited)
 * unless quiet. */
static void wave(long n, int quiet) {
    pthread_t *t = calloc((size_t)n, sizeof *t);
    if (!t || pthread_barrier_init(&ready, NULL, (unsigned)n + 1) || pthread_barrier_init(&done, NULL, (unsigned)n + 1))
        fail("setup");
    for (long i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, worker, NULL)) fail("pthread_create");
    pthread_barrier_wait(&ready);
    if (!quiet) memory("alive");
    pthread_barrier_wait(&done);
    for (long i = 0; i < n; i++) pthread_join(t[i], NULL);
    if (!quiet) memory("exited");
    pthread_barrier_destroy(&ready);
    pthread_barrier_destroy(&done);
    free(t);
}

static int threads(long n) {
    wave(n, 0);
    return 0;
}

static int waves(long n) {
    wave(n, 1);
    memory("wave1");
    for (int i = 1; i < 8; i++) wave(n, 1);
    memory("wave8");
    return 0;
}

static int allocs(long n) {
    CUdeviceptr p;
    for (long i = 0; i < n; i++)
        if (cuMemAlloc_v2(&p, 4096)) fail("cuMemAlloc_v2");
    memory("live");
    return 0;
}

static int churn(long n) {
    for (long i = 0; i < n; i++) {
        CUstream s;
        CUevent e;
        CUdeviceptr p;
        if (cuStreamCreate(&s, 0) || cuEventCreate(&e, 0) || cuMemAlloc_v2(&p, 4096)) fail("create");
        if (cuMemFree_v2(p) || cuEventDestroy_v2(e) || cuStreamDestroy_v2(s)) fail("destroy");
    }
    memory("churned");
    return 0;
}

static double cpu_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int launches(long n) {
    static CUfunction table_k = (CUfunction)0x4b6000, elem_k = (CUfunction)0x4b7000;
    enum { LIVE = 2000, FREED = 64 };
    CUstream s;
    CUdeviceptr live[LIVE], freed[FREED];
    if (cuStreamCreate(&s, 0)) fail("cuStreamCreate");
    for (int i = 0; i < LIVE; i++)
        if (cuMemAlloc_v2(&live[i], 4096 + 256 * (size_t)(i % 16))) fail("cuMemAlloc_v2");
    for (int i = 0; i < FREED; i++)
        if (cuMemAlloc_v2(&freed[i], 4096) || cuMemFree_v2(freed[i])) fail("cuMemAlloc_v2");
    uint64_t table[512], desc[64];
    CUdeviceptr out = live[0];
    void *targs[] = {&out, table}, *eargs[] = {desc};
    unsigned seed = 1;
    double t0 = 0;
    long launched = 0;
    long warm = n / 10 + 100; /* untimed: stacks known, pages faulted in */
    for (long it = 0; it < warm + n; it++) {
        if (it == warm) t0 = cpu_ns(), launched = 0;
        memset(desc, 0, sizeof desc);
        for (int k = 0; k < 3; k++) desc[k] = live[((seed = seed * 1103515245u + 12345u) >> 8) % LIVE];
        for (int k = 3; k < 64; k++) desc[k] = (uint64_t)(k * 37 % 1024); /* sizes, strides */
        if (cuLaunchKernel(elem_k, 1, 1, 1, 256, 1, 1, 0, s, eargs, NULL)) fail("cuLaunchKernel");
        launched++;
        if (it % 4 == 0) {
            memset(table, 0, sizeof table);
            for (int k = 0; k < 96; k++) table[k] = live[(k * 17 + it) % LIVE] + 8 * (uint64_t)(k % 4);
            for (int k = 96; k < 128; k++) table[k] = freed[k % FREED]; /* stale slots */
            if (cuLaunchKernel(table_k, 1, 1, 1, 256, 1, 1, 0, s, targs, NULL)) fail("cuLaunchKernel");
            launched++;
        }
    }
    printf("ns/call %.1f\n", (cpu_ns() - t0) / (double)launched);
    return 0;
}

static int calls(long n) {
    CUstream s;
    CUevent e;
    if (cuStreamCreate(&s, 0) || cuEventCreate(&e, 0)) fail("create");
    for (long i = 0; i < n / 10 + 1000; i++) loop_once(s, e); /* warm: stacks known, pages faulted in */
    double t0 = cpu_ns();
    for (long i = 0; i < n; i++) loop_once(s, e);
    printf("ns/call %.1f\n", (cpu_ns() - t0) / (double)n / 5);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: drvbench threads|waves|allocs|churn|calls|launches N\n");
        return 2;
    }
    long n = atol(argv[2]);
    if (strcmp(argv[1], "threads") == 0) return threads(n);
    if (strcmp(argv[1], "waves") == 0) return waves(n);
    if (strcmp(argv[1], "allocs") == 0) return allocs(n);
    if (strcmp(argv[1], "churn") == 0) return churn(n);
    if (strcmp(argv[1], "calls") == 0) return calls(n);
    if (strcmp(argv[1], "launches") == 0) return launches(n);
    fprintf(stderr, "drvbench: unknown mode %s\n", argv[1]);
    return 2;
}
