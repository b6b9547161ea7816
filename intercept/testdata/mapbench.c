/*
 * mapbench.c: the allocation map's lookups of launch parameter words, with
 * cold caches as a real launch sees them (the driver and the program run in
 * between). Built with allocmap.c by BenchmarkAllocMapLookup.
 *
 * The map holds what a PyTorch run leaves in it: about 4000 live
 * allocations and 3700 recently freed ones, made by more frees than the map
 * remembers and by allocations over freed addresses, so that ranges were
 * removed from it too. Each "launch" looks up 110 words (PyTorch's
 * average), 40% of them device addresses, the rest small integers; once
 * one word per call (as the shim did before) and once all 110 in one call.
 * Prints "one-by-one N ns/word" and "batched N ns/word".
 *
 * With the argument "check" it only compares the batched lookup with the
 * plain one (sc_alloc_contains) on every word, range edges included, and
 * exits 1 on a difference (TestAllocMapLookupAgrees).
 *
 * With "race" a writer thread adds and frees ranges (shifting the arrays
 * and outgrowing them) while the main thread looks up words whose answer
 * never changes: inside ranges that stay live, and in gaps nothing is ever
 * allocated in. Any wrong answer is a reader that used a half-written map;
 * exits 1 then (TestAllocMapConcurrentReaders).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../shim.h"

_Atomic uint32_t sc_fork_gen; /* allocmap.c's only outside symbol besides libc */

enum { NALLOC = 8600, NFREED = 5000, NREUSED = 400, WORDS = 110, LAUNCHES = 400, NW = 1 << 16 };

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static char junk[8 << 20];
static void evict(void) {
    for (size_t i = 0; i < sizeof junk; i += 64) junk[i]++;
}

/* Every word, and both sides of every range's edges: the batched lookup
 * must agree with sc_alloc_contains. */
static int check(const uint64_t *w, size_t n, uint64_t base) {
    static uint64_t probe[NW + 4 * NALLOC + 8 * NREUSED];
    static uint8_t zero[NW + 4 * NALLOC + 8 * NREUSED], hit[NW + 4 * NALLOC + 8 * NREUSED];
    size_t m = 0;
    for (size_t i = 0; i < n; i++) probe[m++] = w[i];
    for (int i = 0; i < NALLOC; i++) {
        uint64_t a = base + (uint64_t)i * 0x100000, size = 4096 + (i % 7) * 512;
        probe[m++] = a - 1, probe[m++] = a, probe[m++] = a + size - 1, probe[m++] = a + size;
    }
    for (int i = NFREED - NREUSED; i < NFREED; i++) {
        uint64_t a = base + (uint64_t)i * 0x100000 + 2048;
        probe[m++] = a - 1, probe[m++] = a, probe[m++] = a + 8191, probe[m++] = a + 8192;
    }
    sc_alloc_lookup(probe, zero, hit, m);
    int bad = 0;
    for (size_t i = 0; i < m; i++)
        if (hit[i] != sc_alloc_contains(probe[i]) && bad++ < 5)
            fprintf(stderr, "mapbench: %#llx: batched %d, plain %d\n", (unsigned long long)probe[i], hit[i],
                    sc_alloc_contains(probe[i]));
    printf("checked %zu words\n", m);
    return bad ? 1 : 0;
}

/* race: stable ranges at base + i*RSTEP, churned ones at + RSTEP/2, and
 * nothing ever at + RSTEP/4. */
enum { RSTABLE = 512, RSTEP = 0x100000, RCHURN_AT = RSTEP / 2, RGAP_AT = RSTEP / 4 };
static atomic_int race_stop;
static long race_writes;

static void *race_writer(void *arg) {
    uint64_t base = *(const uint64_t *)arg, top = base + (uint64_t)RSTABLE * RSTEP;
    unsigned seed = 7;
    for (long k = 0; !atomic_load(&race_stop); k++) {
        /* Low addresses shift the whole array; high ones make it grow. */
        uint64_t a = base + (uint64_t)(rand_r(&seed) % RSTABLE) * RSTEP + RCHURN_AT;
        sc_alloc_add(a, 4096 + rand_r(&seed) % 8192, 0);
        if (k % 3) sc_alloc_free(a);
        uint64_t b = top + (uint64_t)(k % 6000) * 0x10000;
        sc_alloc_add(b, 4096, 0);
        if (k % 2) sc_alloc_free(b);
        race_writes++;
    }
    return NULL;
}

static int race(uint64_t base) {
    for (int i = 0; i < RSTABLE; i++) sc_alloc_add(base + (uint64_t)i * RSTEP, 8192, 0);
    enum { N = 64 };
    uint64_t w[N];
    uint8_t want[N], live_only[N], hit[N];
    unsigned seed = 3;
    pthread_t t;
    if (pthread_create(&t, NULL, race_writer, &base) != 0) return 2;
    long lookups = 0, bad = 0;
    double end = now() + 0.5;
    while (now() < end && bad < 5) {
        for (int j = 0; j < 20; j++, lookups++) {
            for (int i = 0; i < N; i++) {
                uint64_t r = base + (uint64_t)(rand_r(&seed) % RSTABLE) * RSTEP;
                want[i] = i % 2 == 0;
                w[i] = want[i] ? r + rand_r(&seed) % 8192 : r + RGAP_AT + rand_r(&seed) % 8192;
                live_only[i] = (uint8_t)(i % 3 == 0);
            }
            sc_alloc_lookup(w, live_only, hit, N);
            for (int i = 0; i < N; i++)
                if (hit[i] != want[i] && bad++ < 5)
                    fprintf(stderr, "mapbench: %#llx: found %d, want %d\n", (unsigned long long)w[i], hit[i], want[i]);
            if (sc_alloc_contains(w[0]) != want[0] && bad++ < 5)
                fprintf(stderr, "mapbench: contains %#llx wrong\n", (unsigned long long)w[0]);
        }
    }
    atomic_store(&race_stop, 1);
    pthread_join(t, NULL);
    printf("%ld lookups of %d words during %ld writes, %ld wrong\n", lookups, N, race_writes, bad);
    return bad || race_writes == 0 ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "race") == 0) return race(0x302000000ull);
    const uint64_t base = 0x302000000ull;
    for (int i = 0; i < NALLOC; i++) {
        uint64_t a = base + (uint64_t)i * 0x100000;
        sc_alloc_add(a, 4096 + (i % 7) * 512, 0);
        if (i < NFREED) sc_alloc_free(a); /* the first ones fall out of the ring */
    }
    for (int i = NFREED - NREUSED; i < NFREED; i++) /* freed addresses handed out again, larger */
        sc_alloc_add(base + (uint64_t)i * 0x100000 + 2048, 8192, 0);
    static uint64_t w[NW];
    static uint8_t live_only[NW], hit[NW];
    srand(1);
    for (int i = 0; i < NW; i++) {
        w[i] = rand() % 10 < 4 ? base + (uint64_t)(rand() % NALLOC) * 0x100000 + 8 : (uint64_t)(rand() % 100000);
        live_only[i] = rand() % 2;
    }
    if (argc > 1 && strcmp(argv[1], "check") == 0) return check(w, NW, base);
    double t[2] = {0, 0};
    long hits[2] = {0, 0};
    for (int l = 0; l < LAUNCHES; l++) {
        int off = (l * WORDS) % (NW - WORDS);
        for (int mode = 0; mode < 2; mode++) {
            evict();
            double t0 = now();
            if (mode == 0)
                for (int i = 0; i < WORDS; i++) sc_alloc_lookup(w + off + i, live_only + off + i, hit + i, 1);
            else
                sc_alloc_lookup(w + off, live_only + off, hit, WORDS);
            t[mode] += now() - t0;
            for (int i = 0; i < WORDS; i++) hits[mode] += hit[i];
        }
    }
    if (hits[0] != hits[1]) {
        fprintf(stderr, "mapbench: one-by-one found %ld, batched %ld\n", hits[0], hits[1]);
        return 1;
    }
    printf("one-by-one %.1f ns/word\nbatched %.1f ns/word\n", t[0] / (LAUNCHES * WORDS) * 1e9,
           t[1] / (LAUNCHES * WORDS) * 1e9);
    return 0;
}
