//go:build ignore

/*
 * stacks.c: the host call stack of each recorded call, deduplicated into
 * Stack records.
 *
 * We unwind with libgcc's _Unwind_Backtrace (the unwinder glibc's
 * backtrace() uses, without its first-call dlopen and malloc). Frames at the
 * top of the stack that belong to the shim, CUPTI, libcuda or libcudart are
 * skipped but for the outermost of them, the library function the program
 * called, so the next recorded frame is the program's own call; at
 * most sc_stack_depth frames are kept after that (STREAMCHECK_STACK_DEPTH,
 * default 32, or PYTHON_STACK_DEPTH in a Python process; 0 disables
 * stacks). If every frame was skipped (a library
 * without unwind tables stopped the walk) the raw frames are kept instead.
 *
 * Recorded pcs are return addresses as the unwinder reports them: the
 * symbolizer should look up pc-1 to land inside the call instruction.
 *
 * Most calls never unwind: a per-thread cache (below) recognizes a stack
 * seen before from the return addresses on the stack itself. On a miss, a
 * stack is identified by a 64-bit hash of its pcs; the hash -> id map is
 * read without a lock, so a stack another thread has seen costs the unwind,
 * the hash and one probe. A new stack is defined under sc_lock (module
 * lookup, Stack record). Frames are kept in memory for a forked child's
 * replay.
 *
 * A stack through Python functions also gets the line each of them is at
 * (pylines.c): the same frames with those lines are a Stack record of their
 * own, found from the native stack's id and the lines.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unwind.h>

#include "shim.h"

int sc_stack_depth = 32;
/* Each Python call adds its trampoline and several of the interpreter's own
 * frames, so in a PyTorch program the library's layers (nn.Module calls,
 * the dispatcher) fill 32 frames before the program's own code, which
 * reports should name. Unless STREAMCHECK_STACK_DEPTH says otherwise, a
 * Python process keeps this many, from its first call on: a depth that
 * changed later would leave stacks cached at the old one. */
#define PYTHON_STACK_DEPTH 64

#define TRIE_MAX_NODES (1u << 16) /* per thread stack cache; a full trie starts over */
/* STREAMCHECK_STACK_CACHE_NODES lowers it, for tests of the start-over path. */
static uint32_t trie_max_nodes = TRIE_MAX_NODES;

#define MAX_TRIM 8
static uint64_t trim_lo[MAX_TRIM], trim_hi[MAX_TRIM];
static _Atomic int ntrim;

static lfmap stack_ids;  /* hash of the pcs -> stack id */
static lfmap lined_ids;  /* hash of a stack id and Python lines -> the id of that stack with those lines */
typedef struct {
    uint32_t n;
    uint32_t base;     /* a stack with Python lines: the id of the same frames without; else 0 */
    uint32_t ntramp;   /* frames in CPython trampolines (Python functions) */
    uint8_t *tramp;    /* their positions, innermost first */
    uint32_t *mods;    /* each frame's module id */
    uint32_t *line;    /* each frame's line (Python frames), or NULL */
    uint64_t pc[];
} sc_frames;

/* id -> frames, in chunks that never move, so that a call can read its
 * stack's frames without the lock: an id is published (lfmap, the per-thread
 * caches) only after its frames are stored. */
#define CHUNK_BITS 12
#define NCHUNKS 4096
static _Atomic(sc_frames **) chunks[NCHUNKS];
static uint32_t nstacks = 1; /* [0] unused */

static const sc_frames *frames_of(uint32_t id) {
    sc_frames **c = atomic_load_explicit(&chunks[id >> CHUNK_BITS], memory_order_acquire);
    return c ? c[id & ((1u << CHUNK_BITS) - 1)] : NULL;
}

/* The id the next stack will get, its chunk allocated; 0 when the table is
 * full. */
static uint32_t next_id_locked(void) {
    uint32_t id = nstacks;
    if ((id >> CHUNK_BITS) >= NCHUNKS) return 0;
    if (!atomic_load_explicit(&chunks[id >> CHUNK_BITS], memory_order_relaxed)) {
        sc_frames **c = calloc((size_t)1 << CHUNK_BITS, sizeof *c);
        if (!c) return 0;
        atomic_store_explicit(&chunks[id >> CHUNK_BITS], c, memory_order_release);
    }
    return id;
}

static void publish_locked(uint32_t id, sc_frames *f) {
    atomic_load_explicit(&chunks[id >> CHUNK_BITS], memory_order_relaxed)[id & ((1u << CHUNK_BITS) - 1)] = f;
    nstacks++;
}

void sc_stacks_add_trim_range(uint64_t lo, uint64_t hi) {
    if (lo >= hi) return;
    int n = atomic_load(&ntrim);
    for (int i = 0; i < n; i++)
        if (trim_lo[i] == lo && trim_hi[i] == hi) return;
    if (n >= MAX_TRIM) return;
    trim_lo[n] = lo;
    trim_hi[n] = hi;
    atomic_store(&ntrim, n + 1);
}

void sc_stacks_init(void) {
    const char *pc = getenv("STREAMCHECK_PYTHON_CALLERS");
    if (pc && strcmp(pc, "0") == 0) sc_python_callers = 0;
    const char *pl = getenv("STREAMCHECK_PYTHON_LINES");
    if (pl && strcmp(pl, "0") == 0) sc_python_lines_on = 0;
    const char *d = getenv("STREAMCHECK_STACK_DEPTH");
    if (d && *d) {
        long v = strtol(d, NULL, 10);
        if (v < 0) v = 0;
        if (v > SC_MAX_STACK) v = SC_MAX_STACK;
        sc_stack_depth = (int)v;
    } else if (dlsym(RTLD_DEFAULT, "Py_IsInitialized")) { /* a Python process (libpython is loaded) */
        sc_stack_depth = PYTHON_STACK_DEPTH;
    }
    const char *tn = getenv("STREAMCHECK_STACK_CACHE_NODES");
    if (tn && *tn) {
        long v = strtol(tn, NULL, 10);
        if (v >= 16 && v <= TRIE_MAX_NODES) trie_max_nodes = (uint32_t)v;
    }
}

static int trimmed(uint64_t pc) {
    int n = atomic_load_explicit(&ntrim, memory_order_relaxed);
    for (int i = 0; i < n; i++)
        if (pc >= trim_lo[i] && pc < trim_hi[i]) return 1;
    return 0;
}

/* One unwind: pc and CFA of every frame walked. */
#define MAX_WALK (64 + SC_MAX_STACK)
typedef struct {
    uint64_t pc[MAX_WALK], cfa[MAX_WALK];
    int n;     /* frames walked */
    int nskip; /* leading frames in trimmed objects */
    int max;   /* frames to keep after those */
} walk;

static _Unwind_Reason_Code walk_cb(struct _Unwind_Context *ctx, void *arg) {
    walk *w = arg;
    uint64_t pc = (uint64_t)_Unwind_GetIP(ctx);
    if (pc == 0 || w->n >= MAX_WALK) return _URC_END_OF_STACK;
    w->pc[w->n] = pc;
    w->cfa[w->n] = (uint64_t)_Unwind_GetCFA(ctx);
    w->n++;
    if (w->nskip == w->n - 1 && trimmed(pc)) w->nskip++;
    return w->n - w->nskip >= w->max ? _URC_END_OF_STACK : _URC_NO_REASON;
}

static inline uint64_t hash_step(uint64_t h, uint64_t v) {
    h ^= v;
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
}

/* A hash as an lfmap key: 0 and ~0 are reserved. */
static inline uint64_t lfmap_key(uint64_t h) { return h == 0 || h == ~0ull ? 1 : h; }

static uint64_t hash_frames(const uint64_t *pc, int n) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)n;
    for (int i = 0; i < n; i++) h = hash_step(h, pc[i]);
    return lfmap_key(h);
}

static int write_stack_record(uint32_t id, const sc_frames *f) {
    /* id, count, then per frame pc, module, func 0, file 0, line */
    uint8_t buf[20 + SC_MAX_STACK * 30];
    size_t n = 0;
    n += sc_put_uvarint(buf + n, id);
    n += sc_put_uvarint(buf + n, f->n);
    for (uint32_t i = 0; i < f->n; i++) {
        n += sc_put_uvarint(buf + n, f->pc[i]);
        n += sc_put_uvarint(buf + n, f->mods[i]);
        buf[n++] = 0;
        buf[n++] = 0;
        n += sc_put_uvarint(buf + n, f->line ? f->line[i] : 0);
    }
    return sc_append_locked(REC_STACK, buf, n, NULL, 0);
}

/* A new frames object for n frames: pcs, module ids, trampoline positions,
 * and lines if with_lines (zero). */
static sc_frames *frames_new(int n, int with_lines) {
    size_t size = sizeof(sc_frames) + (size_t)n * (sizeof(uint64_t) + sizeof(uint32_t) + 1);
    if (with_lines) size += (size_t)n * sizeof(uint32_t);
    sc_frames *f = calloc(1, size);
    if (!f) return NULL;
    f->n = (uint32_t)n;
    f->mods = (uint32_t *)(f->pc + n);
    f->line = with_lines ? f->mods + n : NULL;
    f->tramp = (uint8_t *)(f->mods + (with_lines ? 2 * n : n));
    return f;
}

/* Writes f's Stack record under the next id and publishes it in m under
 * key h; 0 (f freed) when it cannot. */
static uint32_t store_locked(lfmap *m, uint64_t h, sc_frames *f) {
    uint32_t id = next_id_locked();
    if (!id || !write_stack_record(id, f)) {
        free(f);
        return 0;
    }
    publish_locked(id, f);
    lfmap_put_locked(m, h, id);
    return id;
}

static uint32_t define_locked(uint64_t h, const uint64_t *pc, int n) {
    uint64_t v;
    if (lfmap_get(&stack_ids, h, &v)) return (uint32_t)v; /* another thread won */
    if (!sc_trace_writable_locked()) return 0;
    sc_frames *f = frames_new(n, 0);
    if (!f) return 0;
    memcpy(f->pc, pc, (size_t)n * sizeof(uint64_t));
    sc_modules_init_locked();
    for (int i = 0; i < n; i++) {
        f->mods[i] = sc_module_of_locked(pc[i]);
        if (f->mods[i] == 0 && sc_pytramp_contains(pc[i])) f->tramp[f->ntramp++] = (uint8_t)i;
    }
    return store_locked(&stack_ids, h, f);
}

/* ---- Python lines ---- */

static uint64_t hash_lines(uint32_t base, const uint32_t *line, int k) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)base << 8) ^ (uint64_t)k;
    for (int i = 0; i < k; i++) h = hash_step(h, line[i]);
    return lfmap_key(h);
}

/* Whether stack id d is stack base b (id base) with Python lines line[:k]. */
static int has_lines(uint32_t d, uint32_t base, const sc_frames *b, const uint32_t *line, int k) {
    const sc_frames *f = d ? frames_of(d) : NULL;
    if (!f || f->base != base || !f->line) return 0;
    for (uint32_t i = 0; i < b->ntramp; i++)
        if (f->line[b->tramp[i]] != ((int)i < k ? line[i] : 0)) return 0;
    return 1;
}

static uint32_t define_lined_locked(uint64_t h, uint32_t base, const sc_frames *b, const uint32_t *line, int k) {
    uint64_t v;
    if (lfmap_get(&lined_ids, h, &v)) /* another thread won, or (rarely) two keys share a hash */
        return has_lines((uint32_t)v, base, b, line, k) ? (uint32_t)v : base;
    if (!sc_trace_writable_locked()) return base;
    sc_frames *f = frames_new((int)b->n, 1);
    if (!f) return base;
    memcpy(f->pc, b->pc, (size_t)b->n * sizeof(uint64_t));
    memcpy(f->mods, b->mods, (size_t)b->n * sizeof(uint32_t));
    memcpy(f->tramp, b->tramp, b->ntramp);
    f->ntramp = b->ntramp;
    f->base = base;
    for (int i = 0; i < k; i++) f->line[b->tramp[i]] = line[i];
    uint32_t id = store_locked(&lined_ids, h, f);
    return id ? id : base;
}

/*
 * Per-thread cache of unwinds. An unwind costs 150-400 ns a frame (most in
 * libgcc's FDE search, which grows with the size of libraries like
 * libtorch), and a PyTorch program has hundreds of distinct stacks 30-40
 * frames deep, so the cache must hold them all and be searched without
 * unwinding. On x86-64 each return address is stored 8 bytes below the CFA
 * of the frame that made the call; for a given chain of calls, these slots
 * sit at fixed offsets from our own stack pointer. So the cache is a trie
 * over the walk's frames, innermost first: each node says at which offset
 * from our stack pointer the next return address is stored, and its
 * children are keyed by the value found there; the node where a walk ended
 * holds the stack's id. A lookup reads one slot per frame and follows one
 * edge, a few nanoseconds a frame. Only slots between our stack pointer and
 * the top of the thread's stack are read (memory that is mapped and ours); a
 * thread running on another stack (a coroutine) always unwinds. A chain of
 * calls whose next slot is at a different offset than the cached chain with
 * the same return addresses (a frame sized at run time) is not cached; a
 * lookup along the cached chain then reads, at that frame, a word that is
 * not a return address, and is misled only if it happens to hold the cached
 * one (the exposure of any cache that checks return addresses). Elsewhere
 * than x86-64 the cache is off.
 */
typedef struct {
    int32_t off;    /* where the next return address is, from our stack pointer */
    uint32_t id;    /* stack id where a walk ended here, else 0 */
    uint64_t val;   /* the first child's key */
    uint32_t child; /* the first child, 0 if none */
    uint32_t more;  /* further children are in the spill table */
} tnode;

typedef struct {
    uint64_t val;
    uint32_t parent, child; /* child 0: empty slot */
} tspill;

/*
 * The trie as lookups read it: each run of nodes that have one child and no
 * id becomes a list of checks (this slot must hold this value) stored in a
 * row, ending at a node with an id or with several children, whose children
 * are a sorted array. A lookup along a 40-frame PyTorch stack then reads a
 * few nodes and a row of checks, instead of chasing 40 nodes through memory
 * the driver's own work has evicted from the cache between our calls. It is
 * rebuilt from the trie after inserts, once enough lookups have used the
 * trie meanwhile to pay for the rebuild (REBUILD_RATIO).
 */
typedef struct {
    int64_t off;
    uint64_t val;
} ccheck;
typedef struct {
    uint32_t check0, nchecks; /* the run of checks */
    int32_t maxoff;           /* the furthest slot this node reads */
    int32_t off;              /* several children: the slot whose value picks one */
    uint32_t kid0, nkids;     /* the children in kids[], sorted by value; none: a leaf */
    uint32_t id;              /* a leaf's stack id (0: a chain the trie gave up on) */
} cnode;
typedef struct {
    uint64_t val;
    uint32_t node;
} ckid;
/* Rebuild scratch, per trie node: its children gathered from the trie's
 * first-child links and its spill table. Freed after each rebuild. */
typedef struct {
    uint32_t *count, *start;
    ckid *kid;
} kidlists;

#define REBUILD_RATIO 32 /* trie lookups per node before the compressed form is rebuilt */

#define LINED_SLOTS 256 /* a power of two */
struct sc_stackcache {
    uint64_t lo, hi; /* this thread's stack; hi == 0: no cache */
    tnode *nodes;    /* [0] unused, [1] the root */
    uint32_t nnodes, capnodes;
    tspill *spill;
    uint32_t nspill, capspill; /* capspill: a power of two */
    /* The compressed form; valid unless dirty. */
    int dirty;
    uint32_t dirty_lookups; /* trie lookups since it became dirty */
    cnode *cn;
    ccheck *ck;
    ckid *kids;
    uint32_t ncn, nck, nkids, capc; /* capc: capacity of each of the three */
    struct {
        uint64_t h;
        uint32_t id;
    } lined[LINED_SLOTS]; /* hash of a stack id and lines -> that stack with those lines */
};

static void cache_init(sc_stackcache *c) {
#if defined(__x86_64__)
    pthread_attr_t a;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
        if (pthread_attr_getstack(&a, &addr, &size) == 0) {
            c->lo = (uint64_t)(uintptr_t)addr;
            c->hi = c->lo + size;
        }
        pthread_attr_destroy(&a);
    }
#else
    (void)c;
#endif
}

static inline uint32_t spill_slot(uint32_t parent, uint64_t val, uint32_t mask) {
    uint64_t h = (val ^ ((uint64_t)parent << 40 | parent)) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 32) & mask;
}

static uint32_t spill_get(const sc_stackcache *c, uint32_t parent, uint64_t val) {
    uint32_t mask = c->capspill - 1;
    for (uint32_t i = spill_slot(parent, val, mask);; i = (i + 1) & mask) {
        const tspill *e = &c->spill[i];
        if (!e->child) return 0;
        if (e->parent == parent && e->val == val) return e->child;
    }
}

static int spill_put(sc_stackcache *c, uint32_t parent, uint64_t val, uint32_t child) {
    if ((c->nspill + 1) * 2 > c->capspill) {
        uint32_t nc = c->capspill ? c->capspill * 2 : 256;
        tspill *ns = calloc(nc, sizeof *ns);
        if (!ns) return 0;
        for (uint32_t i = 0; i < c->capspill; i++) {
            tspill *e = &c->spill[i];
            if (!e->child) continue;
            uint32_t j = spill_slot(e->parent, e->val, nc - 1);
            while (ns[j].child) j = (j + 1) & (nc - 1);
            ns[j] = *e;
        }
        free(c->spill);
        c->spill = ns;
        c->capspill = nc;
    }
    uint32_t mask = c->capspill - 1, i = spill_slot(parent, val, mask);
    while (c->spill[i].child) i = (i + 1) & mask;
    c->spill[i] = (tspill){val, parent, child};
    c->nspill++;
    return 1;
}

static void trie_clear(sc_stackcache *c) {
    c->nnodes = 0;
    if (c->spill) memset(c->spill, 0, (size_t)c->capspill * sizeof *c->spill);
    c->nspill = 0;
    c->dirty = 1;
}

/* A new node; 0 when out of room. */
static uint32_t trie_new(sc_stackcache *c) {
    if (c->nnodes >= c->capnodes) {
        if (c->capnodes >= trie_max_nodes) return 0;
        uint32_t nc = c->capnodes ? c->capnodes * 2 : 1024;
        tnode *nn = realloc(c->nodes, (size_t)nc * sizeof *nn);
        if (!nn) return 0;
        c->nodes = nn;
        c->capnodes = nc;
    }
    if (c->nnodes == 0) c->nnodes = 1; /* index 0 means "none" */
    uint32_t n = c->nnodes++;
    memset(&c->nodes[n], 0, sizeof c->nodes[n]);
    return n;
}

static int cmp_kid(const void *a, const void *b) {
    uint64_t x = ((const ckid *)a)->val, y = ((const ckid *)b)->val;
    return x < y ? -1 : x > y;
}

/* Makes the compressed node for the run starting at trie node m; returns
 * its index. Recursion happens only at branches, so its depth is at most a
 * walk's length. */
static uint32_t compress_from(sc_stackcache *c, const kidlists *kl, uint32_t m) {
    uint32_t me = c->ncn++;
    cnode cn = {.check0 = c->nck};
    for (;;) {
        const tnode *t = &c->nodes[m];
        uint32_t nk = kl->count[m];
        if (t->off > cn.maxoff) cn.maxoff = t->off;
        if (t->id || nk != 1) break;
        c->ck[c->nck++] = (ccheck){t->off, kl->kid[kl->start[m]].val};
        m = kl->kid[kl->start[m]].node;
    }
    cn.nchecks = c->nck - cn.check0;
    const tnode *t = &c->nodes[m];
    cn.id = t->id;
    if (!t->id && kl->count[m] > 1) {
        cn.off = t->off;
        cn.nkids = kl->count[m];
        cn.kid0 = c->nkids;
        c->nkids += cn.nkids;
        ckid *k = &kl->kid[kl->start[m]];
        qsort(k, cn.nkids, sizeof *k, cmp_kid);
        for (uint32_t i = 0; i < cn.nkids; i++) {
            c->kids[cn.kid0 + i].val = k[i].val;
            c->kids[cn.kid0 + i].node = compress_from(c, kl, k[i].node);
        }
    }
    c->cn[me] = cn;
    return me;
}

/* Rebuilds the compressed form from the trie; 0 when out of memory. */
static int compress(sc_stackcache *c) {
    uint32_t n = c->nnodes;
    if (n > c->capc) {
        uint32_t nc = c->capnodes; /* >= nnodes */
        void *a = realloc(c->cn, (size_t)nc * sizeof *c->cn), *b = NULL, *d = NULL;
        if (a) c->cn = a;
        if (a && (b = realloc(c->ck, (size_t)nc * sizeof *c->ck))) c->ck = b;
        if (b && (d = realloc(c->kids, (size_t)nc * sizeof *c->kids))) c->kids = d;
        if (!d) return 0;
        c->capc = nc;
    }
    c->ncn = c->nck = c->nkids = 0;
    if (n < 2) return 1;
    /* Every node's children, gathered per parent (counting sort). */
    kidlists kl = {calloc(n, sizeof *kl.count), malloc((size_t)n * sizeof *kl.start), malloc((size_t)n * sizeof *kl.kid)};
    int ok = kl.count && kl.start && kl.kid;
    if (ok) {
        for (uint32_t i = 1; i < n; i++)
            if (c->nodes[i].child) kl.count[i]++;
        for (uint32_t i = 0; i < c->capspill; i++)
            if (c->spill[i].child) kl.count[c->spill[i].parent]++;
        uint32_t sum = 0;
        for (uint32_t i = 0; i < n; i++) {
            kl.start[i] = sum;
            sum += kl.count[i];
        }
        for (uint32_t i = 1; i < n; i++)
            if (c->nodes[i].child) kl.kid[kl.start[i]++] = (ckid){c->nodes[i].val, c->nodes[i].child};
        for (uint32_t i = 0; i < c->capspill; i++)
            if (c->spill[i].child) kl.kid[kl.start[c->spill[i].parent]++] = (ckid){c->spill[i].val, c->spill[i].child};
        for (uint32_t i = 0; i < n; i++) kl.start[i] -= kl.count[i];
        compress_from(c, &kl, 1);
    }
    free(kl.count);
    free(kl.start);
    free(kl.kid);
    return ok;
}

/* The cached id of the stack we are on, or 0, from the compressed form. */
SC_HOT static uint32_t compressed_lookup(const sc_stackcache *c, uint64_t sp) {
    if (c->ncn == 0) return 0;
    uint32_t n = 0;
    for (;;) {
        const cnode *cn = &c->cn[n];
        if (sp + (uint64_t)cn->maxoff + 8 > c->hi) return 0;
        const ccheck *k = c->ck + cn->check0;
        for (uint32_t i = 0; i < cn->nchecks; i++)
            if (*(const uint64_t *)(uintptr_t)(sp + (uint64_t)k[i].off) != k[i].val) return 0;
        if (cn->nkids == 0) return cn->id;
        uint64_t v = *(const uint64_t *)(uintptr_t)(sp + (uint64_t)cn->off);
        /* The last child whose value is <= v. The halving is a conditional
         * move, not a branch: calls from several sites in turn make the
         * comparisons unpredictable. */
        const ckid *b = c->kids + cn->kid0;
        for (uint32_t len = cn->nkids; len > 1;) {
            uint32_t half = len / 2;
            b = b[half].val <= v ? b + half : b;
            len -= half;
        }
        if (b->val != v) return 0;
        n = b->node;
    }
}

/* The cached id of the stack we are on, or 0, from the trie itself. */
SC_HOT static uint32_t trie_lookup(const sc_stackcache *c, uint64_t sp) {
    if (c->nnodes < 2) return 0;
    uint32_t n = 1;
    for (;;) {
        const tnode *t = &c->nodes[n];
        if (t->id) return t->id;
        uint64_t a = sp + (uint64_t)(int64_t)t->off;
        if (a + 8 > c->hi) return 0;
        uint64_t v = *(const uint64_t *)(uintptr_t)a;
        if (t->child && t->val == v) {
            n = t->child;
        } else if (!t->more || !(n = spill_get(c, n, v))) {
            return 0;
        }
    }
}

/* Offset from sp of frame i's return address; -1 if it is not in the part
 * of our stack that lookups may read. In _Unwind_Backtrace's callback for
 * frame i the CFA is the callee's, so pc[i] sits at cfa[i] - 8. */
static int64_t slot_off(const sc_stackcache *c, const walk *w, int i, uint64_t sp) {
    uint64_t a = w->cfa[i] - 8;
    if (w->cfa[i] < 8 || a < sp || a + 8 > c->hi || a - sp > INT32_MAX) return -1;
    return (int64_t)(a - sp);
}

/* Adds the walk w, whose stack is id, to the trie. Frame 0 is our own call
 * of the unwinder: always the same, so not part of the key. */
static void trie_insert(sc_stackcache *c, const walk *w, uint64_t sp, uint32_t id) {
    if (w->n < 2) return;
    if ((size_t)c->nnodes + (size_t)w->n + 1 > trie_max_nodes) trie_clear(c);
    int64_t off = slot_off(c, w, 1, sp);
    if (off < 0) return;
    uint32_t n;
    if (c->nnodes < 2) {
        if (!(n = trie_new(c))) return;
        c->nodes[n].off = (int32_t)off;
    } else {
        n = 1;
        if (c->nodes[1].id || c->nodes[1].off != off) return;
    }
    for (int i = 1; i < w->n; i++) {
        int last = i == w->n - 1;
        int64_t next = last ? 0 : slot_off(c, w, i + 1, sp);
        if (next < 0) return;
        uint64_t v = w->pc[i];
        tnode *t = &c->nodes[n];
        uint32_t ch = t->child && t->val == v ? t->child : (t->more ? spill_get(c, n, v) : 0);
        if (ch) {
            const tnode *k = &c->nodes[ch];
            if (last ? k->id != id : (k->id || k->off != next)) return; /* not one chain of calls */
        } else {
            if (!(ch = trie_new(c))) return;
            t = &c->nodes[n]; /* trie_new may have moved the nodes */
            if (!t->child) {
                t->child = ch;
                t->val = v;
            } else if (spill_put(c, n, v, ch)) {
                t->more = 1;
            } else {
                c->nnodes--; /* the node just made, unlinked */
                return;
            }
            if (last)
                c->nodes[ch].id = id;
            else
                c->nodes[ch].off = (int32_t)next;
        }
        n = ch;
    }
}

/* The stack id of the current call without Python lines (0 when stacks
 * are off). */
SC_HOT static uint32_t native_capture(sc_tstate *ts) {
    int depth = sc_stack_depth;
    if (depth <= 0) return 0;
    sc_stackcache *c = ts->stackcache;
    if (!c) {
        c = calloc(1, sizeof *c);
        if (c) cache_init(c);
        ts->stackcache = c;
    }
    uint64_t sp = (uint64_t)(uintptr_t)__builtin_frame_address(0);
    int use_cache = c && c->hi && sp >= c->lo && sp < c->hi;
    if (use_cache) {
        if (c->dirty && ++c->dirty_lookups >= c->nnodes / REBUILD_RATIO) {
            if (compress(c)) c->dirty = 0;
            c->dirty_lookups = 0;
        }
        uint32_t id = c->dirty ? trie_lookup(c, sp) : compressed_lookup(c, sp);
        if (id) {
            if (sc_stats) atomic_fetch_add_explicit(&sc_stat_stack_hits, 1, memory_order_relaxed);
            return id;
        }
    }
    int64_t unwind_t0 = sc_stats ? sc_stat_clock() : 0;
    walk wk;
    wk.n = 0;
    wk.nskip = 0;
    wk.max = depth;
    _Unwind_Backtrace(walk_cb, &wk);
    /* A walk that stopped short at a CPython trampoline goes again once the
     * trampolines' unwind information is registered (pytramp.c). */
    if (wk.n > 0 && wk.n < MAX_WALK && wk.n - wk.nskip < wk.max && sc_pytramp_register(wk.pc[wk.n - 1])) {
        wk.n = 0;
        wk.nskip = 0;
        _Unwind_Backtrace(walk_cb, &wk);
    }
    if (sc_stats) {
        atomic_fetch_add_explicit(&sc_stat_stack_unwinds, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&sc_stat_unwound_frames, (uint64_t)wk.n, memory_order_relaxed);
        atomic_fetch_add_explicit(&sc_stat_unwind_time, (uint64_t)(sc_stat_clock() - unwind_t0), memory_order_relaxed);
    }
    const uint64_t *frames = wk.pc + wk.nskip;
    int n = wk.n - wk.nskip;
    /* Keep the outermost skipped frame: it is the CUDA library function the
     * program called (cudaMallocAsync in libcudart, or cuLaunchKernel in
     * libcuda for driver-API users), which names the call in reports. */
    if (wk.nskip > 0 && n > 0) {
        frames--;
        n++;
    }
    if (n == 0) { /* nothing but our machinery: keep the raw frames */
        frames = wk.pc;
        n = wk.n < depth ? wk.n : depth;
    }
    if (n == 0) return 0;
    if (n > depth) n = depth;
    uint64_t h = hash_frames(frames, n);
    uint64_t v;
    uint32_t id;
    if (lfmap_get(&stack_ids, h, &v)) {
        id = (uint32_t)v;
    } else {
        sc_lock_acquire();
        id = define_locked(h, frames, n);
        sc_lock_release();
    }
    if (use_cache && id) {
        trie_insert(c, &wk, sp, id);
        c->dirty = 1;
    }
    return id;
}

/* Stack id with the lines its Python frames are at, when it has any. */
static uint32_t with_python_lines(sc_tstate *ts, uint32_t id) {
    const sc_frames *b = frames_of(id);
    if (!b || !b->ntramp) return id;
    uint64_t tramp_pc[SC_MAX_STACK];
    uint32_t line[SC_MAX_STACK];
    for (uint32_t i = 0; i < b->ntramp; i++) tramp_pc[i] = b->pc[b->tramp[i]];
    int k = sc_python_lines(ts, tramp_pc, (int)b->ntramp, line);
    if (k <= 0) return id;
    uint64_t h = hash_lines(id, line, k);
    sc_stackcache *c = ts->stackcache;
    uint32_t slot = (uint32_t)(h >> 32) & (LINED_SLOTS - 1);
    if (c && c->lined[slot].h == h && has_lines(c->lined[slot].id, id, b, line, k)) return c->lined[slot].id;
    uint64_t v;
    uint32_t d;
    if (lfmap_get(&lined_ids, h, &v) && has_lines((uint32_t)v, id, b, line, k)) {
        d = (uint32_t)v;
    } else {
        sc_lock_acquire();
        d = define_lined_locked(h, id, b, line, k);
        sc_lock_release();
    }
    if (c && d != id) {
        c->lined[slot].h = h;
        c->lined[slot].id = d;
    }
    return d;
}

/* Returns the stack id of the current call (0 when stacks are off). Call
 * without sc_lock held. */
SC_HOT uint32_t sc_stack_capture(sc_tstate *ts) {
    uint32_t id = native_capture(ts);
    /* Only a Python program has trampolines; others pay one load here. */
    if (id && sc_python_lines_on && atomic_load_explicit(&sc_pytramp_count, memory_order_relaxed) > 0)
        id = with_python_lines(ts, id);
    return id;
}

void sc_stack_cache_free(sc_tstate *ts) {
    if (ts->stackcache) {
        sc_stackcache *c = ts->stackcache;
        free(c->nodes);
        free(c->spill);
        free(c->cn);
        free(c->ck);
        free(c->kids);
    }
    free(ts->stackcache);
    ts->stackcache = NULL;
}

static int replay_stacks_locked(void) {
    for (uint32_t id = 1; id < nstacks; id++)
        if (!write_stack_record(id, frames_of(id))) return 0;
    return 1;
}

const sc_writer_hooks sc_stacks_hooks = {.replay_locked = replay_stacks_locked};
