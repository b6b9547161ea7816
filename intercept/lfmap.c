//go:build ignore

/*
 * lfmap.c: a u64 -> u64 open-addressing hash map whose lookups take no lock.
 *
 * Used for the lookups on every recorded call (stack hash -> stack id, stream
 * handle -> known, function handle -> parameter layout), so a launch never
 * waits for another thread. Writers hold sc_lock. A writer fills the value
 * and then publishes the key with a release store; a reader that sees the
 * key (acquire) sees the value. Growing copies the live entries into a new
 * table that is published with one pointer store; the old table is leaked
 * (never freed) because a reader may still be probing it. Growth doubles, so
 * the leak is at most the size of the current table.
 *
 * Keys 0 (empty slot) and ~0 (deleted slot) are reserved; callers map them
 * away. A reader may miss a key that a concurrent writer is adding: callers
 * treat a miss as "check again under sc_lock".
 *
 * Deletes leave dead slots, and a table whose live and dead slots fill it is
 * rebuilt at the same size: a map that things are added to and deleted
 * from for ever (streams created and destroyed, communicators) would leak a
 * table every few hundred deletes. So the table a rebuild or a clear
 * replaces is kept as the map's spare and is the next rebuild's target: a
 * map holds at most its table, one spare and the smaller tables it
 * outgrew. A reader still probing the spare while it is refilled can miss
 * a key (callers check again under sc_lock) or find one the refill put
 * there, which is in the map; it re-reads the key after the value, so it
 * never returns a value another key put in the slot since.
 */
#include <stdlib.h>

#include "shim.h"

#define K_EMPTY 0ull
#define K_DEAD (~0ull)

/* One allocation, each key beside its value: a lookup reads the table's
 * header and one slot, two cache lines that are usually cold (the driver's
 * own work between our calls evicts them). */
typedef struct {
    _Atomic uint64_t key, val;
} lfslot;

struct lftab {
    uint32_t cap;  /* power of two */
    uint32_t used; /* live + dead slots */
    uint32_t live;
    lfslot slot[];
};

static uint64_t mix(uint64_t x) {
    /* splitmix64 finalizer: handles, hashes and pointers all spread well. */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

static lftab *tab_new(uint32_t cap) {
    lftab *t = calloc(1, sizeof *t + (size_t)cap * sizeof(lfslot));
    if (!t) return NULL;
    t->cap = cap;
    return t;
}

SC_HOT int lfmap_get(lfmap *m, uint64_t key, uint64_t *val) {
    lftab *t = atomic_load_explicit(&m->tab, memory_order_acquire);
    if (!t) return 0;
    uint32_t mask = t->cap - 1;
    for (uint32_t i = (uint32_t)mix(key) & mask, n = 0; n < t->cap; i = (i + 1) & mask, n++) {
        uint64_t k = atomic_load_explicit(&t->slot[i].key, memory_order_acquire);
        if (k == key) {
            *val = atomic_load_explicit(&t->slot[i].val, memory_order_acquire);
            /* The slot refilled since (a spare reused): not key's value. */
            return atomic_load_explicit(&t->slot[i].key, memory_order_relaxed) == key;
        }
        if (k == K_EMPTY) return 0;
    }
    return 0;
}

/* Empties a spare for reuse. The refill stores each value with release
 * (tab_insert), after these stores: a reader that reads a value the refill
 * wrote, re-reading the slot's key, sees that it changed. */
static void tab_clear(lftab *t) {
    for (uint32_t i = 0; i < t->cap; i++) atomic_store_explicit(&t->slot[i].key, K_EMPTY, memory_order_relaxed);
    t->used = t->live = 0;
}

/* Insert into t, which has room; no publication ordering concerns for a
 * table not yet visible, but the same stores are correct for a visible one. */
static void tab_insert(lftab *t, uint64_t key, uint64_t val) {
    uint32_t mask = t->cap - 1;
    uint32_t i = (uint32_t)mix(key) & mask;
    for (;;) {
        uint64_t k = atomic_load_explicit(&t->slot[i].key, memory_order_relaxed);
        if (k == key) { /* a reader of the new value must see what it points to */
            atomic_store_explicit(&t->slot[i].val, val, memory_order_release);
            return;
        }
        if (k == K_EMPTY) break;
        i = (i + 1) & mask;
    }
    /* Dead slots are not reused: a reader probing past one must still find
     * keys beyond it. They are dropped when the table is rebuilt. */
    atomic_store_explicit(&t->slot[i].val, val, memory_order_release);
    atomic_store_explicit(&t->slot[i].key, key, memory_order_release);
    t->used++;
    t->live++;
}

int lfmap_put_locked(lfmap *m, uint64_t key, uint64_t val) {
    if (key == K_EMPTY || key == K_DEAD) return 0;
    lftab *t = atomic_load_explicit(&m->tab, memory_order_relaxed);
    uint64_t old;
    if (t && lfmap_get(m, key, &old)) {
        tab_insert(t, key, val); /* updates in place */
        return 1;
    }
    if (!t || (uint64_t)(t->used + 1) * 10 > (uint64_t)t->cap * 7) {
        uint32_t cap = t ? t->cap : 256;
        while ((uint64_t)((t ? t->live : 0) + 1) * 10 > (uint64_t)cap * 4) cap *= 2;
        lftab *nt = m->spare; /* one too small is left: the map outgrew it */
        if (nt && nt->cap >= cap)
            tab_clear(nt);
        else if (!(nt = tab_new(cap)))
            return 0;
        m->spare = t;
        if (t) {
            for (uint32_t i = 0; i < t->cap; i++) {
                uint64_t k = atomic_load_explicit(&t->slot[i].key, memory_order_relaxed);
                if (k != K_EMPTY && k != K_DEAD)
                    tab_insert(nt, k, atomic_load_explicit(&t->slot[i].val, memory_order_relaxed));
            }
        }
        atomic_store_explicit(&m->tab, nt, memory_order_release);
        t = nt; /* the old table stays allocated: readers may be in it */
    }
    tab_insert(t, key, val);
    return 1;
}

void lfmap_del_locked(lfmap *m, uint64_t key) {
    lftab *t = atomic_load_explicit(&m->tab, memory_order_relaxed);
    if (!t || key == K_EMPTY || key == K_DEAD) return;
    uint32_t mask = t->cap - 1;
    for (uint32_t i = (uint32_t)mix(key) & mask, n = 0; n < t->cap; i = (i + 1) & mask, n++) {
        uint64_t k = atomic_load_explicit(&t->slot[i].key, memory_order_relaxed);
        if (k == key) {
            atomic_store_explicit(&t->slot[i].key, K_DEAD, memory_order_release);
            t->live--;
            return;
        }
        if (k == K_EMPTY) return;
    }
}

/* Forgets every entry. The table becomes the spare: readers may be probing
 * it, and may still use the values they found there. */
void lfmap_clear_locked(lfmap *m) {
    lftab *t = atomic_load_explicit(&m->tab, memory_order_relaxed);
    if (!t) return;
    atomic_store_explicit(&m->tab, NULL, memory_order_release);
    m->spare = t;
}
