//go:build ignore

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
 * replaces them (pools hand the same addresses out again). A range that
 * falls out of the ring is forgotten at once (kind 0: no lookup finds it)
 * but leaves the array with DEAD_BATCH others in one pass: removed one at a
 * time, each free moved the array's tail, the whole map when ranges are
 * freed in the order they were allocated (a driver that hands out fresh
 * addresses), which made the map most of a recorded call's cost
 * (bench/README.md, the interposed call).
 *
 * Launches only read the map; allocation and free write it. Readers take no
 * lock (a seqlock): an atomic read-modify-write on the launch path waits for
 * every store before it to reach the cache, and the trace writer's stores
 * to fresh lines of the trace file made that cost a cache miss on the GPU
 * machine. A reader checks that no write began or ended while it searched
 * and searches again if one did; so that a search never reads freed memory,
 * arrays outgrown are kept, not freed (they sum to less than the current).
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define RECENT_FREES 4096
#define DEAD_BATCH 512 /* forgotten ranges removed together */

typedef struct {
    uint64_t hi;
    uint32_t freed; /* 0 live, else the generation of the free (see ring) */
    uint32_t kind;  /* SC_ALLOC_DEVICE, SC_ALLOC_HOST (pinned or registered host memory), 0 forgotten */
} range;

/* The arrays as readers find them: their capacity bounds every index a
 * search can reach, however torn its read of the count. */
typedef struct arrays {
    uint64_t *los; /* los[i] is range i's lo; sorted */
    range *rs;
    size_t cap;
    struct arrays *retired; /* the arrays this one replaced */
} arrays;

static pthread_mutex_t mapmu = PTHREAD_MUTEX_INITIALIZER; /* writers */
static _Atomic uint32_t mapseq;          /* odd while a writer changes the map */
static _Atomic(arrays *) rd_arrays;      /* what readers search */
static _Atomic size_t rd_n;              /* the count readers use */
static uint64_t *los; /* writers' view: rd_arrays' los and rs */
static range *rs;
static size_t nrs, caprs;
static size_t ndead; /* forgotten ranges still in the arrays */
static arrays *cur;
static _Atomic uint64_t minlo = UINT64_MAX, maxhi = 0; /* quick reject, may be stale-wide */

/* ThreadSanitizer models no fence (GCC refuses one under -fsanitize=thread)
 * and cannot know that a reader throws away what it read while a writer
 * changed the map. Built for it (CI's TSan run of the intercept tests), the
 * fences become acquire and release accesses of the count, and a read
 * section's plain reads are not checked; the writers, every atomic and the
 * rest of the shim are. */
#if defined(__SANITIZE_THREAD__)
#define SEQ_TSAN 1
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
#endif

static void write_begin(void) {
    pthread_mutex_lock(&mapmu);
#ifdef SEQ_TSAN
    atomic_fetch_add_explicit(&mapseq, 1, memory_order_acq_rel);
#else
    atomic_store_explicit(&mapseq, atomic_load_explicit(&mapseq, memory_order_relaxed) + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release); /* the odd count before any change */
#endif
}

static void write_end(void) {
    atomic_store_explicit(&rd_n, nrs, memory_order_relaxed);
    atomic_store_explicit(&mapseq, atomic_load_explicit(&mapseq, memory_order_relaxed) + 1, memory_order_release);
    pthread_mutex_unlock(&mapmu);
}

/* A read section: read_begin, the search, then read_retry says whether a
 * writer got in the way (then search again). */
static inline uint32_t read_begin(void) {
    uint32_t s;
    for (unsigned spins = 0; (s = atomic_load_explicit(&mapseq, memory_order_acquire)) & 1; spins++)
        if (spins > 1000) sched_yield(); /* the writer was preempted */
#ifdef SEQ_TSAN
    AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
#endif
    return s;
}

static inline int read_retry(uint32_t s) {
#ifdef SEQ_TSAN
    AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
    return atomic_load_explicit(&mapseq, memory_order_acquire) != s;
#else
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&mapseq, memory_order_relaxed) != s;
#endif
}

/* The arrays and count a reader searches; n never exceeds the capacity. */
static inline const arrays *read_arrays(size_t *n) {
    const arrays *a = atomic_load_explicit(&rd_arrays, memory_order_acquire);
    size_t k = atomic_load_explicit(&rd_n, memory_order_relaxed);
    *n = a && k <= a->cap ? k : (a ? a->cap : 0);
    return a;
}

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
SC_HOT static size_t upper(uint64_t addr) {
    if (nrs == 0) return 0;
    const uint64_t *b = los;
    for (size_t n = nrs; n > 1;) {
        size_t half = n / 2;
        b = b[half] <= addr ? b + half : b;
        n -= half;
    }
    return (size_t)(b - los) + (*b <= addr);
}

SC_HOT static void remove_at(size_t i) {
    if (!rs[i].kind) ndead--;
    memmove(&los[i], &los[i + 1], (nrs - i - 1) * sizeof *los);
    memmove(&rs[i], &rs[i + 1], (nrs - i - 1) * sizeof *rs);
    nrs--;
}

/* Moves the map to arrays twice the size. The old ones stay allocated: a
 * reader may be searching them. */
static int grow(void) {
    size_t nc = caprs ? caprs * 2 : 1024;
    arrays *a = malloc(sizeof *a);
    uint64_t *nl = malloc(nc * sizeof *nl);
    range *nr = malloc(nc * sizeof *nr);
    if (!a || !nl || !nr) {
        free(a);
        free(nl);
        free(nr);
        return 0;
    }
    if (nrs) {
        memcpy(nl, los, nrs * sizeof *nl);
        memcpy(nr, rs, nrs * sizeof *nr);
    }
    *a = (arrays){nl, nr, nc, cur};
    los = nl, rs = nr, caprs = nc, cur = a;
    atomic_store_explicit(&rd_arrays, a, memory_order_release);
    return 1;
}

SC_HOT static int insert_at(size_t i, uint64_t lo, uint64_t hi, uint32_t kind) {
    if (nrs == caprs && !grow()) return 0;
    memmove(&los[i + 1], &los[i], (nrs - i) * sizeof *los);
    memmove(&rs[i + 1], &rs[i], (nrs - i) * sizeof *rs);
    los[i] = lo;
    rs[i] = (range){hi, 0, kind};
    nrs++;
    return 1;
}

SC_HOT static void remove_range(uint64_t lo, uint64_t hi, int freed_only) {
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

SC_HOT void sc_alloc_add(uint64_t base, uint64_t size, int host) {
    if (base == 0) return;
    uint64_t hi = sc_range_end(base, size);
    uint32_t kind = host ? SC_ALLOC_HOST : SC_ALLOC_DEVICE;
    write_begin();
    /* Pools hand out the same range again and again: flip it in place. */
    size_t i = upper(base);
    if (i > 0 && los[i - 1] == base && rs[i - 1].hi == hi) {
        if (!rs[i - 1].kind) ndead--;
        rs[i - 1].freed = 0;
        rs[i - 1].kind = kind;
        goto out;
    }
    /* Whatever overlapped is stale now: the allocator handed the bytes out again. */
    remove_range(base, hi, 0);
    if (!insert_at(upper(base), base, hi, kind)) goto out;
    if (base < atomic_load(&minlo)) atomic_store(&minlo, base);
    if (hi > atomic_load(&maxhi)) atomic_store(&maxhi, hi);
out:
    write_end();
}

/* Under the writers' lock: removes the forgotten ranges, in one pass. */
SC_COLD static void remove_dead(void) {
    size_t w = 0;
    for (size_t r = 0; r < nrs; r++) {
        if (!rs[r].kind) continue;
        los[w] = los[r];
        rs[w++] = rs[r];
    }
    nrs = w;
    ndead = 0;
}

/* Under the writers' lock: the live range at base becomes a recent free. */
static inline __attribute__((always_inline)) void free_at(uint64_t base) {
    size_t i = upper(base);
    if (i > 0 && los[i - 1] == base && !rs[i - 1].freed) {
        if (ring_len == RECENT_FREES) {
            /* Forget the oldest free, unless its range was reused or freed again since. */
            size_t old = (ring_next + RECENT_FREES - ring_len) % RECENT_FREES;
            size_t j = upper(ring[old].lo);
            if (j > 0 && los[j - 1] == ring[old].lo && rs[j - 1].freed == ring[old].gen && rs[j - 1].kind) {
                rs[j - 1].kind = 0;
                if (++ndead >= DEAD_BATCH) remove_dead();
            }
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
}

SC_HOT void sc_alloc_free(uint64_t base) {
    if (base == 0) return;
    write_begin();
    free_at(base);
    write_end();
}

/* An unmap: every live range that starts in [lo, hi), the mappings side by
 * side that one call unmaps. */
void sc_alloc_free_range(uint64_t lo, uint64_t hi) {
    if (lo == 0) return;
    write_begin();
    size_t i = upper(lo);
    if (i > 0 && los[i - 1] == lo) i--;
    while (i < nrs && los[i] < hi) {
        uint64_t at = los[i];
        if (!rs[i].freed) free_at(at);
        i = upper(at); /* the free may have shifted the array */
    }
    write_end();
}

/* In a read section: the range holding addr, live or recently freed; 0 if none. */
SC_HOT static uint64_t holding(uint64_t addr) {
    if (addr < atomic_load_explicit(&minlo, memory_order_relaxed) ||
        addr >= atomic_load_explicit(&maxhi, memory_order_relaxed))
        return 0;
    size_t n;
    const arrays *a = read_arrays(&n);
    if (n == 0) return 0;
    const uint64_t *b = a->los;
    for (size_t len = n; len > 1;) {
        size_t half = len / 2;
        b = b[half] <= addr ? b + half : b;
        len -= half;
    }
    size_t j = (size_t)(b - a->los) + (*b <= addr);
    return j > 0 && addr < a->rs[j - 1].hi ? a->rs[j - 1].kind : 0;
}

SC_HOT void sc_alloc_bounds(uint64_t *lo, uint64_t *hi) {
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
SC_HOT static void lookup_once(const uint64_t *w, const uint8_t *live_only, uint8_t *hit, size_t n) {
    uint64_t lo, hi;
    sc_alloc_bounds(&lo, &hi);
    size_t nr;
    const arrays *a = read_arrays(&nr);
    uint32_t cand[LANES];
    size_t i = 0;
    while (i < n) {
        /* The next LANES words that can be in the map at all. */
        int m = 0;
        for (; i < n && m < LANES; i++) {
            hit[i] = 0;
            if (w[i] >= lo && w[i] < hi) cand[m++] = (uint32_t)i;
        }
        if (m == 0 || nr == 0) continue;
        const uint64_t *b[LANES];
        uint64_t key[LANES];
        for (int k = 0; k < m; k++) b[k] = a->los, key[k] = w[cand[k]];
        for (size_t len = nr; len > 1;) {
            size_t half = len / 2;
            for (int k = 0; k < m; k++) b[k] = b[k][half] <= key[k] ? b[k] + half : b[k];
            len -= half;
        }
        for (int k = 0; k < m; k++) {
            size_t j = (size_t)(b[k] - a->los) + (*b[k] <= key[k]);
            if (j == 0 || key[k] >= a->rs[j - 1].hi || !a->rs[j - 1].kind) continue;
            hit[cand[k]] = !(live_only[cand[k]] && a->rs[j - 1].freed);
        }
    }
}

/* Optimistic reads that writers kept spoiling give way to the writers'
 * lock, so a thread that allocates without pause cannot starve launches. */
#define READ_TRIES 4

SC_HOT void sc_alloc_lookup(const uint64_t *w, const uint8_t *live_only, uint8_t *hit, size_t n) {
    for (int i = 0; i < READ_TRIES; i++) {
        uint32_t s = read_begin();
        lookup_once(w, live_only, hit, n);
        if (!read_retry(s)) return;
    }
    pthread_mutex_lock(&mapmu);
    lookup_once(w, live_only, hit, n);
    pthread_mutex_unlock(&mapmu);
}

/* f(arg) in a read section: optimistic tries, then under the writers' lock. */
SC_HOT static uint64_t read_section(uint64_t (*f)(uint64_t), uint64_t arg) {
    for (int i = 0; i < READ_TRIES; i++) {
        uint32_t s = read_begin();
        uint64_t r = f(arg);
        if (!read_retry(s)) return r;
    }
    pthread_mutex_lock(&mapmu);
    uint64_t r = f(arg);
    pthread_mutex_unlock(&mapmu);
    return r;
}

SC_HOT int sc_alloc_contains(uint64_t addr) { return (int)read_section(holding, addr); }

/* In a read section: see sc_alloc_end_of. */
SC_HOT static uint64_t end_of(uint64_t base) {
    size_t n;
    const arrays *a = read_arrays(&n);
    if (n == 0) return base + 1;
    const uint64_t *b = a->los;
    for (size_t len = n; len > 1;) {
        size_t half = len / 2;
        b = b[half] <= base ? b + half : b;
        len -= half;
    }
    size_t j = (size_t)(b - a->los);
    return *b == base && !a->rs[j].freed ? a->rs[j].hi : base + 1;
}

SC_HOT uint64_t sc_alloc_end_of(uint64_t base) { return read_section(end_of, base); }

/* fork: hold the writers' lock across fork so the child's copy is consistent. */
static void atfork_prepare(void) { pthread_mutex_lock(&mapmu); }
static void atfork_parent(void) { pthread_mutex_unlock(&mapmu); }
static void atfork_child(void) {
    /* The child has one thread, ours; a fresh lock is the safe way out. */
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    memcpy(&mapmu, &fresh, sizeof fresh);
}

const sc_writer_hooks sc_allocmap_hooks = {
    .fork_prepare = atfork_prepare, .fork_parent = atfork_parent, .fork_child = atfork_child};
