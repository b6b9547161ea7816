//go:build cgo

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
 * default 32, 0 disables stacks). If every frame was skipped (a library
 * without unwind tables stopped the walk) the raw frames are kept instead.
 *
 * Recorded pcs are return addresses as the unwinder reports them: the
 * symbolizer should look up pc-1 to land inside the call instruction.
 *
 * A stack is identified by a 64-bit hash of its pcs; the hash -> id map is
 * read without a lock, so a stack seen before costs the unwind, the hash and
 * one probe. A new stack is defined under sc_lock (module lookup, Stack
 * record). Frames are kept in memory for a forked child's replay.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unwind.h>

#include "shim.h"

int sc_stack_depth = 32;

#define MAX_TRIM 8
static uint64_t trim_lo[MAX_TRIM], trim_hi[MAX_TRIM];
static _Atomic int ntrim;

static lfmap stack_ids;
typedef struct {
    uint32_t n;
    uint64_t pc[];
} sc_frames;
static sc_frames **stacks; /* id -> frames; [0] unused */
static uint32_t nstacks = 1;
static uint32_t capstacks;

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
    const char *d = getenv("STREAMCHECK_STACK_DEPTH");
    if (d && *d) {
        long v = strtol(d, NULL, 10);
        if (v < 0) v = 0;
        if (v > SC_MAX_STACK) v = SC_MAX_STACK;
        sc_stack_depth = (int)v;
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

static uint64_t hash_frames(const uint64_t *pc, int n) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)n;
    for (int i = 0; i < n; i++) {
        h ^= pc[i];
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    if (h == 0 || h == ~0ull) h = 1; /* lfmap's reserved keys */
    return h;
}

static int write_stack_record(uint32_t id, const sc_frames *f, const uint32_t *modids) {
    /* id, count, then per frame pc, module, func 0, file 0, line 0 */
    uint8_t buf[20 + SC_MAX_STACK * 16];
    size_t n = 0;
    n += sc_put_uvarint(buf + n, id);
    n += sc_put_uvarint(buf + n, f->n);
    for (uint32_t i = 0; i < f->n; i++) {
        n += sc_put_uvarint(buf + n, f->pc[i]);
        n += sc_put_uvarint(buf + n, modids[i]);
        buf[n++] = 0;
        buf[n++] = 0;
        buf[n++] = 0;
    }
    return sc_append_locked(REC_STACK, buf, n, NULL, 0);
}

static uint32_t *stack_mods; /* module ids, SC_MAX_STACK per stack id, for replay */

static uint32_t define_locked(uint64_t h, const uint64_t *pc, int n) {
    uint64_t v;
    if (lfmap_get(&stack_ids, h, &v)) return (uint32_t)v; /* another thread won */
    if (!sc_trace_writable_locked()) return 0;
    if (nstacks >= capstacks) {
        uint32_t nc = capstacks ? capstacks * 2 : 1024;
        sc_frames **ns = realloc(stacks, nc * sizeof *ns);
        if (!ns) return 0;
        stacks = ns;
        uint32_t *nm = realloc(stack_mods, (size_t)nc * SC_MAX_STACK * sizeof *nm);
        if (!nm) return 0;
        stack_mods = nm;
        capstacks = nc;
    }
    sc_frames *f = malloc(sizeof *f + (size_t)n * sizeof(uint64_t));
    if (!f) return 0;
    f->n = (uint32_t)n;
    memcpy(f->pc, pc, (size_t)n * sizeof(uint64_t));
    sc_modules_init_locked();
    uint32_t *mods = stack_mods + (size_t)nstacks * SC_MAX_STACK;
    for (int i = 0; i < n; i++) mods[i] = sc_module_of_locked(pc[i]);
    uint32_t id = nstacks;
    if (!write_stack_record(id, f, mods)) {
        free(f);
        return 0;
    }
    stacks[id] = f;
    nstacks++;
    lfmap_put_locked(&stack_ids, h, id);
    return id;
}

/*
 * Per-thread cache of recent unwinds. A program calls CUDA from a few places
 * in a loop, and the unwind (~150 ns a frame) is the shim's main cost; so we
 * keep the last few unwinds of each thread with the CFA of every frame, and
 * before unwinding we check whether one of them is still the stack we are
 * on: on x86-64 each return address is stored at the CFA of the frame that
 * made the call minus 8, so if every such slot still holds the cached pc,
 * the chain of calls is the same one. Only slots between our own stack pointer and the top of the
 * thread's stack are read (memory that is mapped and ours); a thread running
 * on another stack (a coroutine) always unwinds. Elsewhere than x86-64 the
 * cache is off.
 */
#define CACHE_WAYS 16

typedef struct {
    int n, nskip;
    uint32_t id;
    uint64_t pc[MAX_WALK], cfa[MAX_WALK];
} cache_entry;

struct sc_stackcache {
    uint64_t lo, hi; /* this thread's stack; hi == 0: no cache */
    int next, last;
    cache_entry e[CACHE_WAYS];
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

static int still_valid(const cache_entry *e, uint64_t sp, uint64_t hi) {
    if (e->n < 2) return 0;
    /* In _Unwind_Backtrace's callback for frame i, the CFA is that of the
     * callee, so the return address pc[i] sits at cfa[i] - 8. Frame 0 is
     * our own call of the unwinder: always the same. Check the program's
     * innermost frame first: that is where two call sites differ. */
    int first = e->nskip < e->n ? e->nskip : 1;
    if (first < 1) first = 1;
    for (int k = 0; k < e->n - 1; k++) {
        int i = k == 0 ? first : (k < first ? k : k + 1);
        uint64_t a = e->cfa[i] - 8;
        if (e->cfa[i] < 8 || a < sp || a + 8 > hi) return 0;
        if (*(const uint64_t *)(uintptr_t)a != e->pc[i]) return 0;
    }
    return 1;
}

/* Returns the stack id of the current call (0 when stacks are off). Call
 * without sc_lock held. */
uint32_t sc_stack_capture(sc_tstate *ts) {
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
        for (int k = 0; k < CACHE_WAYS; k++) {
            int i = (c->last + k) % CACHE_WAYS;
            if (still_valid(&c->e[i], sp, c->hi)) {
                if (sc_stats) atomic_fetch_add_explicit(&sc_stat_stack_hits, 1, memory_order_relaxed);
                c->last = i;
                return c->e[i].id;
            }
        }
    }
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
    if (sc_stats) atomic_fetch_add_explicit(&sc_stat_stack_unwinds, 1, memory_order_relaxed);
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
        cache_entry *e = &c->e[c->next];
        e->n = wk.n;
        e->nskip = wk.nskip;
        e->id = id;
        memcpy(e->pc, wk.pc, (size_t)wk.n * sizeof wk.pc[0]);
        memcpy(e->cfa, wk.cfa, (size_t)wk.n * sizeof wk.cfa[0]);
        c->last = c->next;
        c->next = (c->next + 1) % CACHE_WAYS;
    }
    return id;
}

void sc_stack_cache_free(sc_tstate *ts) {
    free(ts->stackcache);
    ts->stackcache = NULL;
}

int sc_replay_stacks_locked(void) {
    for (uint32_t id = 1; id < nstacks; id++)
        if (!write_stack_record(id, stacks[id], stack_mods + (size_t)id * SC_MAX_STACK)) return 0;
    return 1;
}
