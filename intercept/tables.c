//go:build ignore

/*
 * tables.c: the string table.
 *
 * Strings are interned under sc_lock: callers cache the ids they use on
 * every call (API names per callback id, kernel names per function), so the
 * table is touched only on first sight of a string. The text of every string
 * is kept so that a forked child can write the same definitions, with the
 * same ids, at the top of its own trace (ids then stay valid in every cache).
 */
#include <stdlib.h>
#include <string.h>

#include "shim.h"

typedef struct {
    uint32_t len;
    char text[]; /* not NUL-terminated */
} sc_str;

static sc_str **strs;     /* id -> string; strs[0] unused */
static uint32_t nstrs = 1; /* next id */
static uint32_t capstrs;
static uint32_t *sindex; /* open addressing: slot -> id, 0 empty */
static uint32_t sindex_cap;

static uint64_t fnv(const char *s, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (uint8_t)s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static int write_string_record(uint32_t id) {
    uint8_t hdr[10];
    size_t hn = sc_put_uvarint(hdr, id);
    return sc_append_locked(REC_STRING, hdr, hn, (const uint8_t *)strs[id]->text, strs[id]->len);
}

static int sindex_grow(void) {
    uint32_t ncap = sindex_cap ? sindex_cap * 2 : 1024;
    uint32_t *ni = calloc(ncap, sizeof *ni);
    if (!ni) return 0;
    for (uint32_t id = 1; id < nstrs; id++) {
        uint32_t i = (uint32_t)fnv(strs[id]->text, strs[id]->len) & (ncap - 1);
        while (ni[i]) i = (i + 1) & (ncap - 1);
        ni[i] = id;
    }
    free(sindex);
    sindex = ni;
    sindex_cap = ncap;
    return 1;
}

/* Returns the id of s (defining it in the trace if new), 0 for "" or when
 * out of memory or when the trace cannot take the definition. */
uint32_t sc_intern_locked(const char *s, size_t n) {
    if (!s || n == 0) return 0;
    if (n > SC_MAX_STRING) n = SC_MAX_STRING;
    if (!sc_trace_writable_locked()) return 0;
    uint64_t h = fnv(s, n);
    if (sindex_cap) {
        for (uint32_t i = (uint32_t)h & (sindex_cap - 1); sindex[i]; i = (i + 1) & (sindex_cap - 1)) {
            sc_str *e = strs[sindex[i]];
            if (e->len == n && memcmp(e->text, s, n) == 0) return sindex[i];
        }
    }
    if ((uint64_t)(nstrs + 1) * 2 > sindex_cap && !sindex_grow()) return 0;
    if (nstrs >= capstrs) {
        uint32_t nc = capstrs ? capstrs * 2 : 256;
        sc_str **ns = realloc(strs, nc * sizeof *ns);
        if (!ns) return 0;
        strs = ns;
        capstrs = nc;
    }
    sc_str *e = malloc(sizeof *e + n);
    if (!e) return 0;
    e->len = (uint32_t)n;
    memcpy(e->text, s, n);
    uint32_t id = nstrs;
    strs[id] = e;
    if (!write_string_record(id)) {
        free(e);
        return 0; /* the definition did not reach the file: keep ids dense */
    }
    nstrs++;
    uint32_t i = (uint32_t)h & (sindex_cap - 1);
    while (sindex[i]) i = (i + 1) & (sindex_cap - 1);
    sindex[i] = id;
    return id;
}

SC_HOT uint32_t sc_intern(const char *s) {
    if (!s || !*s) return 0;
    sc_lock_acquire();
    uint32_t id = sc_intern_locked(s, strlen(s));
    sc_lock_release();
    return id;
}

/* Writes every known string again, in id order (a forked child's new file). */
static int replay_strings_locked(void) {
    for (uint32_t id = 1; id < nstrs; id++)
        if (!write_string_record(id)) return 0;
    return 1;
}

const sc_writer_hooks sc_strings_hooks = {.replay_locked = replay_strings_locked};
