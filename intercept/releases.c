//go:build ignore

/*
 * releases.c: frees and destroys recorded before what reuses their memory or
 * handle.
 *
 * Events are recorded at a driver call's exit, but a free (cuMemFree,
 * cuMemFreeAsync) or a destroy (cuStreamDestroy, cuEventDestroy) gives its
 * address or handle back inside the call, before its exit callback takes
 * the trace lock (after the stack capture, which can unwind for a while).
 * Another thread can get the same address from its own allocation, or the
 * same handle from a create, in that window and record it first: the trace
 * would then free or destroy the new owner, which the checker reports as a
 * free before the allocation and a use after free of everything after it.
 *
 * So a release announces itself at its entry callback: each thread owns a
 * slot saying "releasing [lo, hi) of this kind". A thread about to record
 * an allocation or a create first waits for every announced release of the
 * same kind that overlaps what it got; the releasing thread clears its slot
 * once its event is in the trace. The driver's own synchronization (the
 * memory or handle went back to it before it handed it out again) orders
 * the announcement before the wait's check. The wait is bounded (WAIT_NS):
 * should a release's exit callback ever need something the waiting thread
 * holds inside the driver, the trace falls back to the old order rather
 * than the program hanging.
 */
#define _GNU_SOURCE
#include <sched.h>

#include "shim.h"

#define SLOTS 1024
#define WAIT_NS 200000000 /* 200 ms */

/* state: generation << 1 | announced; the generation moves on with every
 * announcement, so a reader can tell a slot it saw from a later one. */
typedef struct {
    _Atomic uint32_t state;
    _Atomic uint32_t owned; /* a thread holds this slot */
    _Atomic uint32_t kind;
    _Atomic uint64_t lo, hi;
} slot;

static slot slots[SLOTS];
static _Atomic uint32_t nslots; /* slots ever handed out: readers scan these */
_Atomic uint64_t sc_stat_release_waits;

/* The calling thread's slot, claimed on its first release; NULL if all are
 * taken (its releases then go unannounced, as before this file existed). */
SC_HOT static slot *own_slot(sc_tstate *ts) {
    if (ts->release_slot) return &slots[ts->release_slot - 1];
    for (uint32_t i = 0; i < SLOTS; i++) {
        uint32_t free = 0;
        if (!atomic_compare_exchange_strong(&slots[i].owned, &free, 1)) continue;
        uint32_t n = atomic_load(&nslots); /* readers scan [0, nslots) */
        while (n < i + 1 && !atomic_compare_exchange_weak(&nslots, &n, i + 1)) {
        }
        ts->release_slot = i + 1;
        return &slots[i];
    }
    return NULL;
}

SC_HOT void sc_release_begin(sc_tstate *ts, uint32_t kind, uint64_t lo, uint64_t hi) {
    slot *s = own_slot(ts);
    if (!s) return;
    atomic_store_explicit(&s->kind, kind, memory_order_relaxed);
    atomic_store_explicit(&s->lo, lo, memory_order_relaxed);
    atomic_store_explicit(&s->hi, hi, memory_order_relaxed);
    uint32_t st = atomic_load_explicit(&s->state, memory_order_relaxed);
    atomic_store_explicit(&s->state, ((st >> 1) + 1) << 1 | 1, memory_order_release);
}

SC_HOT void sc_release_end(sc_tstate *ts) {
    if (!ts->release_slot) return;
    slot *s = &slots[ts->release_slot - 1];
    uint32_t st = atomic_load_explicit(&s->state, memory_order_relaxed);
    if (st & 1) atomic_store_explicit(&s->state, st & ~1u, memory_order_release);
}

/* At thread exit: the slot goes back for another thread. */
void sc_release_forget(sc_tstate *ts) {
    if (!ts->release_slot) return;
    sc_release_end(ts);
    atomic_store(&slots[ts->release_slot - 1].owned, 0);
    ts->release_slot = 0;
}

SC_HOT void sc_release_wait(sc_tstate *ts, uint32_t kind, uint64_t lo, uint64_t hi) {
    uint32_t n = atomic_load_explicit(&nslots, memory_order_acquire);
    int64_t deadline = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (i + 1 == ts->release_slot) continue; /* our own release is already recorded */
        slot *s = &slots[i];
        uint32_t st = atomic_load_explicit(&s->state, memory_order_acquire);
        if (!(st & 1)) continue;
        uint32_t k = atomic_load_explicit(&s->kind, memory_order_relaxed);
        uint64_t a = atomic_load_explicit(&s->lo, memory_order_relaxed);
        uint64_t b = atomic_load_explicit(&s->hi, memory_order_relaxed);
        /* A slot announced again while we read it: its new release is not ours to wait for. */
        if (atomic_load_explicit(&s->state, memory_order_acquire) != st) continue;
        if (k != kind || a >= hi || lo >= b) continue;
        if (!deadline) {
            deadline = sc_now_ns() + WAIT_NS;
            if (sc_stats) atomic_fetch_add_explicit(&sc_stat_release_waits, 1, memory_order_relaxed);
        }
        while (atomic_load_explicit(&s->state, memory_order_acquire) == st && sc_now_ns() < deadline) sched_yield();
    }
}

/* fork: the child's other threads are gone, mid-release or not. Their slots
 * stay owned (a few leaked), but nothing waits for them. */
static void atfork_child(void) {
    uint32_t n = atomic_load(&nslots);
    for (uint32_t i = 0; i < n; i++) atomic_fetch_and(&slots[i].state, ~1u);
}

const sc_writer_hooks sc_releases_hooks = {.fork_child = atfork_child};
