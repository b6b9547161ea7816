//go:build ignore

/*
 * params.c: device addresses in a kernel launch's parameters.
 *
 * The driver tells us each parameter's offset and size
 * (cuKernelGetParamInfo for CUkernel handles, which is what <<<>>> launches
 * pass; cuFuncGetParamInfo for CUfunction handles, e.g. CuPy's). We ask once
 * per function handle and keep the answer, with the kernel's name id, in a
 * lock-free map. Each 8-byte word of each parameter (aligned within the
 * parameter; a parameter or tail shorter than 8 bytes is read as far as it
 * goes) is looked up in the allocation map, a chunk of words at a time so
 * the searches' cache misses overlap (sc_alloc_lookup).
 *
 * Matches are graded by where the word sits (docs/launch-arguments.md). A
 * pointer slot is a parameter of exactly 8 bytes, or the first word of a
 * parameter of up to SC_AGGREGATE_BYTES (a descriptor that starts with its
 * pointer: CuPy's CArray, a struct {T *p; int n;}); a match there is
 * strong. Any other word is weak: inside an aggregate it may be padding, a
 * table slot the launch does not fill, or bytes the host never wrote
 * (CuPy builds its parameter buffers on the host heap, and the declared
 * size covers bytes the kernel never reads). Without a layout (the packed
 * "extra" buffer of a handle the driver describes to no one) every word
 * counts as a slot. Ptrs holds the strong matches, sorted and
 * deduplicated, then the weak ones, sorted, deduplicated and minus the
 * strong ones; the event's weak count says how many of the last are weak;
 * at most SC_MAX_PTRS in all.
 *
 * A parameter larger than SC_AGGREGATE_BYTES only yields pointers to live
 * allocations, not to recently freed ones, and those are weak. Such
 * parameters are tables built on the host stack, like PyTorch's
 * multi-tensor-apply metadata (up to 4 KiB of tensor addresses, of which a
 * launch fills the first few): the unused slots hold whatever the stack
 * held before, often the address of a tensor freed a moment ago. Recording
 * those as weak matches would cost trace bytes and time on every optimizer
 * launch (bench/README.md) for findings that can only ever be notes, so
 * they are left out; a real use of freed memory passed through such a table
 * is missed.
 *
 * Raw words (sc_raw_words, the default; STREAMCHECK_RAW_WORDS=0 turns it
 * off): the words within the map's bounds are not looked up here but
 * written as they are, in the same three classes (pointer slots, weak
 * words, table words that may name live memory only), and the trace reader
 * matches them against the trace's own allocations as the lookup below
 * would (model/launchwords.go): a copy on the calling thread instead of a
 * search per word, the costliest part of a PyTorch launch.
 *
 * kernelParams[i] points at parameter i. With kernelParams NULL, the
 * parameters are one packed buffer passed in "extra"
 * (CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE); with no layout we then scan every
 * aligned word of that buffer.
 */
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define MAX_PARAMS 8192

/* One allocation: a launch reads the header and the parameters' places
 * from adjacent cache lines. */
typedef struct {
    uint32_t off, size;
} param;
typedef struct {
    char *name;        /* our copy of symbolName, to notice a reused handle */
    const char *symbol_ptr; /* the symbolName pointer last seen, for a quick check */
    uint32_t name_sid; /* kernel name string id */
    int known;         /* layout known (else we cannot read kernelParams) */
    uint32_t n;
    param p[];
} layout;

static lfmap layouts;

int sc_raw_words = 1; /* launches carry their words unmatched (above) */

static int probe(CUfunction f, uint32_t *off, uint32_t *size, uint32_t *n) {
    /* Returns 1 with the layout when one of the two queries works. */
    for (int which = 0; which < 2; which++) {
        CUresult (*q)(void *, size_t, size_t *, size_t *) =
            which == 0 ? (CUresult(*)(void *, size_t, size_t *, size_t *))sc_drv.cuKernelGetParamInfo
                       : (CUresult(*)(void *, size_t, size_t *, size_t *))sc_drv.cuFuncGetParamInfo;
        if (!q) continue;
        uint32_t i = 0;
        CUresult r = CUDA_SUCCESS;
        for (; i < MAX_PARAMS; i++) {
            size_t o = 0, s = 0;
            r = q((void *)f, i, &o, &s);
            if (r != CUDA_SUCCESS) break;
            off[i] = (uint32_t)o;
            size[i] = (uint32_t)s;
        }
        /* A kernel with no parameters answers INVALID_VALUE for index 0;
         * a handle of the wrong kind answers something else (or INVALID_VALUE
         * too, in which case the other query decides). */
        if (i > 0 || (r == CUDA_ERROR_INVALID_VALUE && which == 1)) {
            *n = i;
            return 1;
        }
    }
    *n = 0;
    return 0;
}

/* The kernel's name, asked of the driver: for a graph node, and for a
 * launch without the name CUPTI gives (the interposition backend). */
const char *sc_kernel_name(CUfunction f) {
    const char *name = NULL;
    if (sc_drv.cuFuncGetName && sc_drv.cuFuncGetName(&name, f) == CUDA_SUCCESS && name) return name;
    name = NULL;
    if (sc_drv.cuKernelGetName && sc_drv.cuKernelGetName(&name, (CUkernel)f) == CUDA_SUCCESS && name) return name;
    return NULL;
}

SC_HOT static layout *lookup_layout(CUfunction f, const char *symbol) {
    uint64_t key = (uint64_t)(uintptr_t)f, v;
    if (key == 0 || key == ~0ull) return NULL;
    if (lfmap_get(&layouts, key, &v)) {
        layout *l = (layout *)(uintptr_t)v;
        /* CUPTI hands the same string each time; a graph node's caller
         * may have no name at all (a driver without cuFuncGetName). */
        if (symbol == l->symbol_ptr || !symbol) return l;
        if (strcmp(l->name ? l->name : "", symbol) == 0) return l;
        /* The handle now names another kernel (module unloaded, handle reused). */
    }
    /* First launch of this function: ask the driver, outside sc_lock
     * (its name too, when the caller has none). */
    if (!symbol) symbol = sc_kernel_name(f);
    uint32_t *off = malloc(2 * MAX_PARAMS * sizeof *off), *size = off + MAX_PARAMS;
    if (!off) return NULL;
    uint32_t n = 0;
    int known = probe(f, off, size, &n);
    layout *l = calloc(1, sizeof *l + (size_t)n * sizeof(param));
    if (!l) {
        free(off);
        return NULL;
    }
    l->known = known;
    l->n = n;
    for (uint32_t i = 0; i < n; i++) l->p[i] = (param){off[i], size[i]};
    free(off);
    if (symbol) l->name = strdup(symbol);
    l->symbol_ptr = symbol;
    sc_lock_acquire();
    l->name_sid = symbol ? sc_intern_locked(symbol, strlen(symbol)) : 0;
    lfmap_put_locked(&layouts, key, (uint64_t)(uintptr_t)l);
    sc_lock_release();
    return l;
}

/* A handle's kernel can change only when its module goes away (unload, or
 * the destruction of its context), so the layouts are dropped then; the
 * name check above covers what this misses: a handle reused by another
 * thread between the driver's unload and our exit callback. */
void sc_layouts_forget(void) {
    sc_lock_acquire();
    lfmap_clear_locked(&layouts);
    sc_lock_release();
}

/* Strong matches fill out[] from the front, weak ones from the back
 * (sc_launch_scan puts them in order). */
SC_HOT static void flush(sc_scan *fd) {
    sc_alloc_lookup(fd->w, fd->live_only, fd->hit, fd->nw);
    for (uint32_t i = 0; i < fd->nw && fd->n + fd->nweak < SC_MAX_PTRS; i++) {
        if (!fd->hit[i]) continue;
        if (fd->weak[i]) fd->out[SC_MAX_PTRS - 1 - fd->nweak++] = fd->w[i];
        else fd->out[fd->n++] = fd->w[i];
    }
    fd->nw = 0;
}

/* Raw words: kept unmatched for the reader (model/launchwords.go): strong
 * from the front of out, weak from its back, table words in tab. */
static inline void add_raw(sc_scan *fd, uint64_t w, int live_only, int weak) {
    if (fd->n + fd->nweak + fd->ntab >= SC_MAX_PTRS) return;
    if (live_only) fd->tab[fd->ntab++] = w;
    else if (weak) fd->out[SC_MAX_PTRS - 1 - fd->nweak++] = w;
    else fd->out[fd->n++] = w;
}

static inline void add_word(sc_scan *fd, uint64_t w, int live_only, int weak) {
    if (fd->raw) {
        add_raw(fd, w, live_only, weak);
        return;
    }
    if (fd->nw == SC_SCAN_CHUNK) flush(fd);
    fd->w[fd->nw] = w;
    fd->live_only[fd->nw] = (uint8_t)live_only;
    fd->weak[fd->nw] = (uint8_t)weak;
    fd->nw++;
}

/* Gathers the words of p[0..len) that can be device addresses at all
 * (within the map's bounds: most words are small integers, or zero); the
 * first `slots` of them are pointer slots, the rest weak. */
SC_HOT static void scan_bytes(sc_scan *fd, const uint8_t *p, size_t len, int live_only, size_t slots) {
    uint64_t lo = fd->lo, span = fd->hi - fd->lo;
    size_t full = len / 8;
    fd->words += (uint32_t)((len + 7) / 8);
    for (size_t k = 0; k < full; k++) {
        uint64_t w;
        memcpy(&w, p + 8 * k, 8);
        if (w - lo < span) add_word(fd, w, live_only, k >= slots);
    }
    if (len % 8) {
        uint64_t w = 0;
        memcpy(&w, p + 8 * full, len % 8); /* little endian: low bytes */
        if (w - lo < span) add_word(fd, w, live_only, 1); /* too short for an address */
    }
}

/* A parameter of the given size: its words that are pointer slots (the
 * first, if it is 8 bytes or an aggregate of up to SC_AGGREGATE_BYTES),
 * and whether it yields live allocations only. */
static inline void scan_param(sc_scan *fd, const uint8_t *p, uint32_t size) {
    int table = size > SC_AGGREGATE_BYTES;
    scan_bytes(fd, p, size, table, table || size < 8 ? 0 : 1);
}

/* Sorts v[0..n) with tmp[0..n) as scratch: an LSD radix sort over the
 * bytes in which the values differ (device addresses share their top bytes,
 * so usually three or four passes). qsort cost about 25 ns an address for
 * the hundreds a PyTorch optimizer launch passes. */
SC_HOT static void sort_u64(uint64_t *v, uint64_t *tmp, uint32_t n) {
    if (n < 2) return;
    if (n <= 32) { /* the common case: a handful */
        for (uint32_t i = 1; i < n; i++) {
            uint64_t x = v[i];
            uint32_t j = i;
            for (; j > 0 && v[j - 1] > x; j--) v[j] = v[j - 1];
            v[j] = x;
        }
        return;
    }
    uint64_t diff = 0;
    for (uint32_t i = 1; i < n; i++) diff |= v[i] ^ v[0];
    uint64_t *a = v, *b = tmp;
    for (int shift = 0; shift < 64; shift += 8) {
        if (((diff >> shift) & 0xff) == 0) continue;
        uint32_t pos[256] = {0};
        for (uint32_t i = 0; i < n; i++) pos[(a[i] >> shift) & 0xff]++;
        for (uint32_t d = 0, sum = 0; d < 256; d++) {
            uint32_t c = pos[d];
            pos[d] = sum;
            sum += c;
        }
        for (uint32_t i = 0; i < n; i++) b[pos[(a[i] >> shift) & 0xff]++] = a[i];
        uint64_t *t = a;
        a = b;
        b = t;
    }
    if (a != v) memcpy(v, a, (size_t)n * sizeof *v);
}

/* Sorts and deduplicates v[0..n) with tmp as scratch; returns the new n. */
SC_HOT static uint32_t sort_unique(uint64_t *v, uint64_t *tmp, uint32_t n) {
    if (n < 2) return n;
    sort_u64(v, tmp, n);
    uint32_t k = 1;
    for (uint32_t i = 1; i < n; i++)
        if (v[i] != v[k - 1]) v[k++] = v[i];
    return k;
}

/* Raw words: strong, then weak, then table words, in out (ts->ptrs); ev
 * says so (FLAG_RAW_WORDS, the weak count, and the table words' count in
 * its ext). Nothing is sorted or matched on the calling thread. */
SC_HOT static void finish_raw(sc_tstate *ts, sc_scan *fd, sc_event *ev) {
    uint64_t *out = fd->out;
    memmove(out + fd->n, out + SC_MAX_PTRS - fd->nweak, (size_t)fd->nweak * sizeof *out);
    memcpy(out + fd->n + fd->nweak, fd->tab, (size_t)fd->ntab * sizeof *out);
    ev->nptrs = fd->n + fd->nweak + fd->ntab;
    ev->nweak = fd->nweak + fd->ntab;
    ev->flags |= FLAG_RAW_WORDS;
    if (fd->ntab) {
        sc_ext *x = &ts->ext;
        memset(x, 0, sizeof *x);
        x->live = fd->ntab;
        ev->ext = x;
    }
}

/* Fills ts->ptrs and ev's nptrs and nweak: the strong matches, then the
 * weak ones (or, with sc_raw_words, the words unmatched: finish_raw); and
 * ev->kernel, the name's string id. */
SC_HOT void sc_launch_scan(sc_tstate *ts, CUfunction f, const char *symbol, void **kernelParams, void **extra,
                           sc_event *ev) {
    int64_t t0 = sc_stats ? sc_stat_clock() : 0;
    layout *l = lookup_layout(f, symbol);
    ev->kernel = l ? l->name_sid : 0;
    if (!l && symbol) ev->kernel = sc_intern(symbol);

    sc_scan *fd = &ts->scan;
    fd->out = ts->ptrs;
    fd->tab = ts->sort_tmp;
    fd->raw = sc_raw_words;
    fd->n = fd->nweak = fd->ntab = fd->words = fd->nw = 0;
    const uint8_t *buf = NULL;
    size_t buflen = 0;
    if (!kernelParams && extra) {
        for (int i = 0; i < 64 && (uintptr_t)extra[i] != SC_LAUNCH_PARAM_END; i += 2) {
            if ((uintptr_t)extra[i] == SC_LAUNCH_PARAM_BUFFER_POINTER) buf = extra[i + 1];
            else if ((uintptr_t)extra[i] == SC_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1])
                buflen = *(const size_t *)extra[i + 1];
            /* unknown keys: skip their value too, as the driver does */
        }
    }
    sc_alloc_bounds(&fd->lo, &fd->hi);
    if (kernelParams && l && l->known) {
        for (uint32_t i = 0; i < l->n && fd->n + fd->nweak < SC_MAX_PTRS; i++)
            if (kernelParams[i]) scan_param(fd, kernelParams[i], l->p[i].size);
    } else if (buf && buflen) {
        if (l && l->known) {
            for (uint32_t i = 0; i < l->n && fd->n + fd->nweak < SC_MAX_PTRS; i++)
                if ((size_t)l->p[i].off + l->p[i].size <= buflen) scan_param(fd, buf + l->p[i].off, l->p[i].size);
        } else {
            scan_bytes(fd, buf, buflen / 8 * 8, 0, SIZE_MAX); /* no layout: every aligned word, a slot */
        }
    }
    if (fd->raw) {
        finish_raw(ts, fd, ev);
        goto stats;
    }
    flush(fd);
    uint64_t *out = fd->out;
    uint32_t n = sort_unique(out, ts->sort_tmp, fd->n), nw = 0;
    if (fd->nweak) {
        /* The weak matches, at the back: sorted, deduplicated, less the
         * strong ones (a merge walk), moved down to follow the strong. */
        uint64_t *w = out + SC_MAX_PTRS - fd->nweak;
        uint32_t m = sort_unique(w, ts->sort_tmp, fd->nweak);
        for (uint32_t i = 0, j = 0; i < m; i++) {
            while (j < n && out[j] < w[i]) j++;
            if (j < n && out[j] == w[i]) continue;
            out[n + nw++] = w[i]; /* n + nw <= SC_MAX_PTRS - fd->nweak + i: never ahead of the reads */
        }
    }
    fd->n = n + nw;
    fd->nweak = nw;
    ev->nptrs = fd->n;
    ev->nweak = nw;
stats:
    if (sc_stats) {
        atomic_fetch_add_explicit(&sc_stat_launches, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&sc_stat_scan_words, fd->words, memory_order_relaxed);
        if (fd->raw) atomic_fetch_add_explicit(&sc_stat_raw_words, ev->nptrs, memory_order_relaxed);
        atomic_fetch_add_explicit(&sc_stat_scan_time, (uint64_t)(sc_stat_clock() - t0), memory_order_relaxed);
    }
}
