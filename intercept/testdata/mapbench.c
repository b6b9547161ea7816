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
 */
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
    sc_alloc_rdlock();
    sc_alloc_lookup_rdlocked(probe, zero, hit, m);
    sc_alloc_rdunlock();
    int bad = 0;
    for (size_t i = 0; i < m; i++)
        if (hit[i] != sc_alloc_contains(probe[i]) && bad++ < 5)
            fprintf(stderr, "mapbench: %#llx: batched %d, plain %d\n", (unsigned long long)probe[i], hit[i],
                    sc_alloc_contains(probe[i]));
    printf("checked %zu words\n", m);
    return bad ? 1 : 0;
}

int main(int argc, char **argv) {
    const uint64_t base = 0x302000000ull;
    for (int i = 0; i < NALLOC; i++) {
        uint64_t a = base + (uint64_t)i * 0x100000;
        sc_alloc_add(a, 4096 + (i % 7) * 512);
        if (i < NFREED) sc_alloc_free(a); /* the first ones fall out of the ring */
    }
    for (int i = NFREED - NREUSED; i < NFREED; i++) /* freed addresses handed out again, larger */
        sc_alloc_add(base + (uint64_t)i * 0x100000 + 2048, 8192);
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
            sc_alloc_rdlock();
            if (mode == 0)
                for (int i = 0; i < WORDS; i++) sc_alloc_lookup_rdlocked(w + off + i, live_only + off + i, hit + i, 1);
            else
                sc_alloc_lookup_rdlocked(w + off, live_only + off, hit, WORDS);
            sc_alloc_rdunlock();
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
