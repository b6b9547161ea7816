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
 * Prints "one-by-one N ns/word", "batched N ns/word" and "sorted N ns/word"
 * (the same words, sorted beforehand, walked by sc_alloc_lookup_sorted).
 * With "dense", each launch has 1000 words (400 addresses) instead.
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

enum { NALLOC = 8600, NFREED = 5000, NREUSED = 400, WORDS = 110, DENSE_WORDS = 1000, LAUNCHES = 400, NW = 1 << 16 };

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static char junk[8 << 20];
static void evict(void) {
    for (size_t i = 0; i < sizeof junk; i += 64) junk[i]++;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Every word, and both sides of every range's edges: the batched lookup
 * must agree with sc_alloc_contains, and the sorted walk with both. */
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
    /* The sorted walk finds what the batched lookup finds, live_only
     * included: each address once, in order. */
    static uint64_t keys[sizeof probe / sizeof probe[0]], want[sizeof probe / sizeof probe[0]],
        got[sizeof probe / sizeof probe[0]];
    static uint8_t live_only[sizeof probe / sizeof probe[0]];
    srand(2);
    for (size_t i = 0; i < m; i++) live_only[i] = (uint8_t)(rand() % 2);
    sc_alloc_lookup(probe, live_only, hit, m);
    size_t nwant = 0;
    for (size_t i = 0; i < m; i++) {
        keys[i] = probe[i] << 1 | live_only[i];
        if (hit[i]) want[nwant++] = probe[i];
    }
    qsort(want, nwant, sizeof want[0], cmp_u64);
    size_t k = 0;
    for (size_t i = 0; i < nwant; i++)
        if (k == 0 || want[i] != want[k - 1]) want[k++] = want[i];
    nwant = k;
    qsort(keys, m, sizeof keys[0], cmp_u64);
    size_t ngot = sc_alloc_lookup_sorted(keys, m, got, 0, m);
    if (ngot != nwant && bad++ < 5) fprintf(stderr, "mapbench: sorted walk found %zu, batched %zu\n", ngot, nwant);
    for (size_t i = 0; i < ngot && i < nwant; i++)
        if (got[i] != want[i] && bad++ < 5)
            fprintf(stderr, "mapbench: sorted walk's %zuth %#llx, batched %#llx\n", i, (unsigned long long)got[i],
                    (unsigned long long)want[i]);
    /* A full out stops the walk. */
    if (nwant > 3 && sc_alloc_lookup_sorted(keys, m, got, 0, 3) != 3 && bad++ < 5)
        fprintf(stderr, "mapbench: sorted walk went past its max\n");
    printf("checked %zu words, %zu found by the sorted walk\n", m, ngot);
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
        sc_alloc_add(a, 4096 + rand_r(&seed) % 8192);
        if (k % 3) sc_alloc_free(a);
        uint64_t b = top + (uint64_t)(k % 6000) * 0x10000;
        sc_alloc_add(b, 4096);
        if (k % 2) sc_alloc_free(b);
        race_writes++;
    }
    return NULL;
}

static int race(uint64_t base) {
    for (int i = 0; i < RSTABLE; i++) sc_alloc_add(base + (uint64_t)i * RSTEP, 8192);
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
            /* The sorted walk over the same words: it must find the wanted ones only. */
            uint64_t keys[N], got[N], wanted[N];
            size_t nwant = 0;
            for (int i = 0; i < N; i++) {
                keys[i] = w[i] << 1 | live_only[i];
                if (want[i]) wanted[nwant++] = w[i];
            }
            qsort(keys, N, sizeof keys[0], cmp_u64);
            qsort(wanted, nwant, sizeof wanted[0], cmp_u64);
            size_t k = 0;
            for (size_t i = 0; i < nwant; i++)
                if (k == 0 || wanted[i] != wanted[k - 1]) wanted[k++] = wanted[i];
            size_t ngot = sc_alloc_lookup_sorted(keys, N, got, 0, N);
            if (ngot != k && bad++ < 5) fprintf(stderr, "mapbench: sorted walk found %zu, want %zu\n", ngot, k);
            for (size_t i = 0; i < ngot && i < k; i++)
                if (got[i] != wanted[i] && bad++ < 5)
                    fprintf(stderr, "mapbench: sorted walk found %#llx, want %#llx\n", (unsigned long long)got[i],
                            (unsigned long long)wanted[i]);
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
    /* "dense": launches of 1000 words (400 addresses, an optimizer's table). */
    int words = argc > 1 && strcmp(argv[1], "dense") == 0 ? DENSE_WORDS : WORDS, launches = LAUNCHES * WORDS / words;
    double t[3] = {0, 0, 0};
    long hits[3] = {0, 0, 0};
    for (int l = 0; l < launches; l++) {
        int off = (l * words) % (NW - words);
        /* The sorted walk's keys: the words within the map's bounds, sorted
         * before the clock starts (the shim sorts them in cache). */
        uint64_t lo, hi, keys[DENSE_WORDS], found[DENSE_WORDS];
        sc_alloc_bounds(&lo, &hi);
        size_t nk = 0;
        for (int i = 0; i < words; i++)
            if (w[off + i] >= lo && w[off + i] < hi) keys[nk++] = w[off + i] << 1 | live_only[off + i];
        qsort(keys, nk, sizeof keys[0], cmp_u64);
        for (int mode = 0; mode < 3; mode++) {
            evict();
            double t0 = now();
            if (mode == 0)
                for (int i = 0; i < words; i++) sc_alloc_lookup(w + off + i, live_only + off + i, hit + i, 1);
            else if (mode == 1)
                sc_alloc_lookup(w + off, live_only + off, hit, words);
            else
                hits[2] += (long)sc_alloc_lookup_sorted(keys, nk, found, 0, words);
            t[mode] += now() - t0;
            if (mode == 2) continue;
            /* Distinct addresses found, as the sorted walk counts them. */
            size_t nf = 0;
            for (int i = 0; i < words; i++)
                if (hit[i]) found[nf++] = w[off + i];
            qsort(found, nf, sizeof found[0], cmp_u64);
            for (size_t i = 0; i < nf; i++) hits[mode] += i == 0 || found[i] != found[i - 1];
        }
    }
    if (hits[0] != hits[1] || hits[1] != hits[2]) {
        fprintf(stderr, "mapbench: one-by-one found %ld, batched %ld, sorted %ld\n", hits[0], hits[1], hits[2]);
        return 1;
    }
    printf("one-by-one %.1f ns/word\nbatched %.1f ns/word\nsorted %.1f ns/word\n", t[0] / (launches * words) * 1e9,
           t[1] / (launches * words) * 1e9, t[2] / (launches * words) * 1e9);
    return 0;
}
