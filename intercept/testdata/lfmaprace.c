/*
 * lfmaprace.c: lfmap's lock-free lookups while a writer adds and deletes
 * keys for ever, so that tables are rebuilt into the spare over and over
 * (and cleared now and then, which makes the table the spare too): the
 * known streams' churn. Built with lfmap.c by TestLFMapChurn.
 *
 * Every key k maps to VAL(k). Readers look up keys that stay in the map
 * (until a clear, after which the writer puts them back), keys the writer
 * adds and deletes, and keys never added. A lookup may miss a key that is
 * in the map (callers check again under the lock), but a key it finds must
 * come with its own value, must not have been deleted before the lookup
 * began (a refilled spare must hold none of its old keys), and a key never
 * added must never be found.
 * Exits 1 with the first violation, else prints the lookups' counts.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../shim.h"

#define STABLE 64
#define ROUNDS 400000
#define LIVE 16            /* churn keys in the map at once */
#define CLEAR_EVERY 100000 /* a clear, as at a fork or a module unload */
#define VAL(k) ((k) * 0x9e3779b97f4a7c15ull | 1)

static lfmap m;
static _Atomic int stop, bad;
static _Atomic uint64_t written; /* churn keys [CHURN0, CHURN0 + written) were added */
#define CHURN0 1000000ull
#define ABSENT0 (1ull << 40)

static void put_stable(void) {
    for (uint64_t k = 1; k <= STABLE; k++) lfmap_put_locked(&m, k, VAL(k));
}

static void *reader(void *arg) {
    uint64_t seed = (uintptr_t)arg * 7919 + 1, found = 0, lookups = 0;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t w = atomic_load_explicit(&written, memory_order_acquire), k, v;
        switch (seed >> 62) {
        case 0: k = 1 + (seed >> 20) % STABLE; break;
        case 1: k = ABSENT0 + (seed >> 20) % 4096; break;
        default: k = CHURN0 + (w > LIVE * 2 ? w - (seed >> 20) % (LIVE * 2) - 1 : 0); break;
        }
        lookups++;
        if (!lfmap_get(&m, k, &v)) continue;
        found++;
        /* Seeing written == w, the writer's deletes of keys up to w - 2 - LIVE are done. */
        int deleted = k >= CHURN0 && k < ABSENT0 && k - CHURN0 + LIVE + 2 <= w;
        if (k >= ABSENT0 || deleted || v != VAL(k)) {
            fprintf(stderr, "lfmaprace: key %#llx found with %#llx, want %s\n", (unsigned long long)k,
                    (unsigned long long)v, k >= ABSENT0 ? "none (never added)" : deleted ? "none (deleted)" : "its own value");
            atomic_store(&bad, 1);
            return NULL;
        }
    }
    printf("reader: %llu lookups, %llu found\n", (unsigned long long)lookups, (unsigned long long)found);
    return NULL;
}

int main(void) {
    put_stable();
    pthread_t r[2];
    for (uintptr_t i = 0; i < 2; i++) pthread_create(&r[i], NULL, reader, (void *)(i + 1));
    for (uint64_t i = 0; i < ROUNDS && !atomic_load(&bad); i++) {
        lfmap_put_locked(&m, CHURN0 + i, VAL(CHURN0 + i));
        atomic_store_explicit(&written, i + 1, memory_order_release);
        if (i >= LIVE) lfmap_del_locked(&m, CHURN0 + i - LIVE);
        if (i % CLEAR_EVERY == CLEAR_EVERY - 1) {
            lfmap_clear_locked(&m);
            put_stable();
        }
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++) pthread_join(r[i], NULL);
    return atomic_load(&bad);
}
