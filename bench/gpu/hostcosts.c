/*
 * hostcosts.c: what the operations on the shim's per-call path cost on the
 * CPU of the machine it runs on, each timed over many repetitions: reading
 * the TSC and the monotonic clock (event timestamps), an uncontended mutex
 * and rwlock (the trace writer's lock, the allocation map's), an atomic
 * add, a 64-byte copy, and a load that misses the caches (a pointer chase
 * through 256 MiB). The GPU machine's CPU ran the shim 2-3 times slower
 * than the development VM; this tells which of these explains it.
 *
 * build and run: cc -O2 -o hostcosts bench/gpu/hostcosts.c -lpthread && ./hostcosts
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

#define N 2000000
#define REPORT(name, t0, n) printf("%-34s %8.1f ns\n", name, (now() - (t0)) / (n))

int main(void) {
    volatile uint64_t sink = 0;
    double t;

    t = now();
    for (int i = 0; i < N; i++) sink += __rdtsc();
    REPORT("rdtsc", t, N);

    t = now();
    for (int i = 0; i < N; i++) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        sink += ts.tv_nsec;
    }
    REPORT("clock_gettime(CLOCK_MONOTONIC)", t, N);

    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    t = now();
    for (int i = 0; i < N; i++) {
        pthread_mutex_lock(&mu);
        sink++;
        pthread_mutex_unlock(&mu);
    }
    REPORT("mutex lock+unlock", t, N);

    pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
    t = now();
    for (int i = 0; i < N; i++) {
        pthread_rwlock_rdlock(&rw);
        sink++;
        pthread_rwlock_unlock(&rw);
    }
    REPORT("rwlock rdlock+unlock", t, N);

    _Atomic uint64_t a = 0;
    t = now();
    for (int i = 0; i < N; i++) atomic_fetch_add(&a, 1);
    REPORT("atomic add", t, N);

    static char src[4096], dst[4096];
    t = now();
    for (int i = 0; i < N; i++) {
        memcpy(dst + (i & 63) * 64, src + (i & 31) * 64, 64);
        __asm__ volatile("" ::: "memory");
    }
    REPORT("memcpy 64 bytes", t, N);

    /* A random cyclic permutation of 256 MiB of cache lines: every load
     * depends on the last and misses. */
    size_t lines = (256u << 20) / 64;
    uint64_t *mem = aligned_alloc(64, lines * 64);
    uint32_t *perm = malloc(lines * sizeof *perm);
    if (!mem || !perm) return 1;
    for (size_t i = 0; i < lines; i++) perm[i] = (uint32_t)i;
    srand(1);
    for (size_t i = lines - 1; i > 0; i--) {
        size_t j = ((size_t)rand() * RAND_MAX + rand()) % (i + 1);
        uint32_t x = perm[i];
        perm[i] = perm[j];
        perm[j] = x;
    }
    for (size_t i = 0; i < lines; i++) mem[perm[i] * 8] = (uint64_t)perm[(i + 1) % lines] * 8;
    uint64_t p = perm[0] * 8;
    int chase = N / 4;
    t = now();
    for (int i = 0; i < chase; i++) p = mem[p];
    sink += p;
    REPORT("dependent load, cache miss", t, chase);

    /* The same over 1 MiB: what a line evicted from L1/L2 but not from L3 costs. */
    size_t small = (1u << 20) / 64;
    for (size_t i = 0; i < small; i++) perm[i] = (uint32_t)i;
    for (size_t i = small - 1; i > 0; i--) {
        size_t j = (size_t)rand() % (i + 1);
        uint32_t x = perm[i];
        perm[i] = perm[j];
        perm[j] = x;
    }
    for (size_t i = 0; i < small; i++) mem[perm[i] * 8] = (uint64_t)perm[(i + 1) % small] * 8;
    p = perm[0] * 8;
    t = now();
    for (int i = 0; i < N; i++) p = mem[p];
    sink += p;
    REPORT("dependent load within 1 MiB", t, N);
    return (int)(sink & 0);
}
