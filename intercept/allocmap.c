//go:build cgo

/*
 * allocmap.c: the device allocations the shim has seen, to recognize device
 * addresses among a launch's parameter words and to classify the sides of
 * a unified-address copy.
 *
 * A sorted array of [lo, hi) ranges, searched by binary search over a
 * separate array of their lo addresses: a launch looks up its parameter
 * words (PyTorch's average about a hundred), and 8-byte keys put three
 * times as many probes in a cache line as whole records would. A freed
 * range stays in the array, marked freed, until it falls out of a bounded
 * ring of recent frees (RECENT_FREES), so a kernel launched with a pointer
 * to memory freed a moment ago (a use after free, the bug this tool hunts)
 * still has the pointer recorded. A new allocation that overlaps freed ranges
 * replaces them (pools hand the same addresses out again).
 *
 * Launches only read the map (rwlock read side); allocation and free write it.
 */
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define RECENT_FREES 4096

typedef struct {
    uint64_t hi;
    uint32_t freed; /* 0 live, else the generation of the free (see ring) */
} range;

static pthread_rwlock_t maplock = PTHREAD_RWLOCK_INITIALIZER;
static uint64_t *los; /* los[i] is range i's lo; sorted */
static range *rs;
static size_t nrs, caprs;
static _Atomic uint64_t minlo = UINT64_MAX, maxhi = 0; /* quick reject, may be stale-wide */

/* Recent frees, oldest first out. A range freed, reallocated and freed
 * again is in the ring twice; the generation tells the stale entry from the
 * current one, so only the latest free's eviction forgets the range. */
static struct {
    uint64_t lo;
    uint32_t gen;
} ring[RECENT_FREES];
static size_t ring_next, ring_len;
static uint32_t free_gen;

/* First index with los[i] > addr. The halving step is a conditional move,
 * not a branch: launch arguments make the comparisons unpredictable. */
static size_t upper(uint64_t addr) {
    if (nrs == 0) return 0;
    const uint64_t *b = los;
    for (size_t n = nrs; n > 1;) {
        size_t half = n / 2;
        b = b[half] <= addr ? b + half : b;
        n -= half;
    }
    return (size_t)(b - los) + (*b <= addr);
}

static void remove_at(size_t i) {
    memmove(&los[i], &los[i + 1], (nrs - i - 1) * sizeof *los);
    memmove(&rs[i], &rs[i + 1], (nrs - i - 1) * sizeof *rs);
    nrs--;
}

static int insert_at(size_t i, uint64_t lo, uint64_t hi) {
    if (nrs == caprs) {
        size_t nc = caprs ? caprs * 2 : 1024;
        uint64_t *nl = realloc(los, nc * sizeof *nl);
        if (!nl) return 0;
        los = nl;
        range *nr = realloc(rs, nc * sizeof *nr);
        if (!nr) return 0;
        rs = nr;
        caprs = nc;
    }
    memmove(&los[i + 1], &los[i], (nrs - i) * sizeof *los);
    memmove(&rs[i + 1], &rs[i], (nrs - i) * sizeof *rs);
    los[i] = lo;
    rs[i] = (range){hi, 0};
    nrs++;
    return 1;
}

static void remove_range(uint64_t lo, uint64_t hi, int freed_only) {
    /* Ranges don't overlap each other, so those overlapping [lo, hi) are
     * contiguous, starting at most one before upper(lo). */
    size_t i = upper(lo);
    if (i > 0 && rs[i - 1].hi > lo) i--;
    while (i < nrs && los[i] < hi) {
        if (rs[i].hi > lo && (!freed_only || rs[i].freed))
            remove_at(i);
        else
            i++;
    }
}

void sc_alloc_add(uint64_t base, uint64_t size) {
    if (base == 0) return;
    if (size == 0) size = 1;
    uint64_t hi = base + size < base ? UINT64_MAX : base + size;
    pthread_rwlock_wrlock(&maplock);
    /* Pools hand out the same range again and again: flip it in place. */
    size_t i = upper(base);
    if (i > 0 && los[i - 1] == base && rs[i - 1].hi == hi) {
        rs[i - 1].freed = 0;
        goto out;
    }
    /* Whatever overlapped is stale now: the allocator handed the bytes out again. */
    remove_range(base, hi, 0);
    if (!insert_at(upper(base), base, hi)) goto out;
    if (base < atomic_load(&minlo)) atomic_store(&minlo, base);
    if (hi > atomic_load(&maxhi)) atomic_store(&maxhi, hi);
out:
    pthread_rwlock_unlock(&maplock);
}

void sc_alloc_free(uint64_t base) {
    if (base == 0) return;
    pthread_rwlock_wrlock(&maplock);
    size_t i = upper(base);
    if (i > 0 && los[i - 1] == base && !rs[i - 1].freed) {
        if (ring_len == RECENT_FREES) {
            /* Forget the oldest free, unless its range was reused or freed again since. */
            size_t old = (ring_next + RECENT_FREES - ring_len) % RECENT_FREES;
            size_t j = upper(ring[old].lo);
            if (j > 0 && los[j - 1] == ring[old].lo && rs[j - 1].freed == ring[old].gen) remove_at(j - 1);
            ring_len--;
        }
        if (++free_gen == 0) free_gen = 1; /* 0 means live */
        i = upper(base); /* the removal may have shifted the array */
        rs[i - 1].freed = free_gen;
        ring[ring_next].lo = base;
        ring[ring_next].gen = free_gen;
        ring_next = (ring_next + 1) % RECENT_FREES;
        ring_len++;
    }
    pthread_rwlock_unlock(&maplock);
}

void sc_alloc_rdlock(void) { pthread_rwlock_rdlock(&maplock); }
void sc_alloc_rdunlock(void) { pthread_rwlock_unlock(&maplock); }

/* The range holding addr, live or recently freed, or NULL. */
static const range *holding(uint64_t addr) {
    if (addr < atomic_load_explicit(&minlo, memory_order_relaxed) ||
        addr >= atomic_load_explicit(&maxhi, memory_order_relaxed))
        return NULL;
    size_t i = upper(addr);
    return i > 0 && addr < rs[i - 1].hi ? &rs[i - 1] : NULL;
}

void sc_alloc_bounds_rdlocked(uint64_t *lo, uint64_t *hi) {
    *lo = atomic_load_explicit(&minlo, memory_order_relaxed);
    *hi = atomic_load_explicit(&maxhi, memory_order_relaxed);
    if (*hi < *lo) *hi = *lo; /* empty map: nothing is within */
}

/*
 * Looks up n words at once, for a launch's parameters: hit[i] is 1 when
 * w[i] is in a live range, or in a recently freed one unless live_only[i].
 * The searches run in lockstep, LANES at a time: every search halves the
 * same array in the same steps, so at each step the LANES loads are
 * independent and their cache misses overlap instead of queuing one after
 * another (a launch's ~100 words otherwise cost one cold search each).
 */
#define LANES 16
void sc_alloc_lookup_rdlocked(const uint64_t *w, const uint8_t *live_only, uint8_t *hit, size_t n) {
    uint64_t lo = atomic_load_explicit(&minlo, memory_order_relaxed);
    uint64_t hi = atomic_load_explicit(&maxhi, memory_order_relaxed);
    uint32_t cand[LANES];
    size_t i = 0;
    while (i < n) {
        /* The next LANES words that can be in the map at all. */
        int m = 0;
        for (; i < n && m < LANES; i++) {
            hit[i] = 0;
            if (w[i] >= lo && w[i] < hi) cand[m++] = (uint32_t)i;
        }
        if (m == 0 || nrs == 0) continue;
        const uint64_t *b[LANES];
        uint64_t key[LANES];
        for (int k = 0; k < m; k++) b[k] = los, key[k] = w[cand[k]];
        for (size_t len = nrs; len > 1;) {
            size_t half = len / 2;
            for (int k = 0; k < m; k++) b[k] = b[k][half] <= key[k] ? b[k] + half : b[k];
            len -= half;
        }
        for (int k = 0; k < m; k++) {
            size_t j = (size_t)(b[k] - los) + (*b[k] <= key[k]);
            if (j == 0 || key[k] >= rs[j - 1].hi) continue;
            hit[cand[k]] = !(live_only[cand[k]] && rs[j - 1].freed);
        }
    }
}

int sc_alloc_contains(uint64_t addr) {
    sc_alloc_rdlock();
    int r = holding(addr) != NULL;
    sc_alloc_rdunlock();
    return r;
}

/* fork: hold the write side across fork so the child's copy is consistent. */
void sc_alloc_atfork_prepare(void) { pthread_rwlock_wrlock(&maplock); }
void sc_alloc_atfork_parent(void) { pthread_rwlock_unlock(&maplock); }
void sc_alloc_atfork_child(void) {
    /* The child has one thread, ours; a fresh lock is the safe way out. */
    pthread_rwlock_t fresh = PTHREAD_RWLOCK_INITIALIZER;
    memcpy(&maplock, &fresh, sizeof fresh);
}
