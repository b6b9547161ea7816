//go:build ignore

/*
 * interpose.c: the interposition backend. The shim hands the program its own
 * wrapper of each driver function it records (drvcalls.h) wherever programs
 * find driver entry points:
 *
 *  - direct calls: the preloaded shim exports the driver's names, so a
 *    program or library linked against libcuda binds to the wrappers;
 *  - cuGetProcAddress and cuGetProcAddress_v2 (cudart, static and shared,
 *    and everything built on cudaGetDriverEntryPoint: PyTorch, CuPy,
 *    Triton, cuda-python): the wrapper calls the real one, keeps its result
 *    and CUdriverProcAddressQueryResult as they are, and swaps the entry
 *    point it returned for ours when it is one we record;
 *  - dlsym on a libcuda handle (cudart finds cuGetProcAddress so).
 *
 * Each wrapper lays its arguments out as CUPTI's "_params" struct (the
 * parameters in order), runs the per-call path's entry (recorder.c: a
 * free's announcement; the clock of a timed call), calls the real function
 * with the struct's values (the entry may have changed them), then the exit
 * path, which decodes and writes the event before the wrapper returns the
 * real result unchanged. The real function is the one libcuda exports under
 * the wrapper's name, or the one cuGetProcAddress returned.
 *
 * The backend starts (loader.c opens libcuda, sc_interpose_setup fills in
 * the real entry points) when the process first reaches the driver through
 * one of these: a wrapper whose real entry point is not known yet, the
 * shim's cuGetProcAddress or cuInit, a dlsym of a driver name in a libcuda
 * handle, an NCCL lookup or call.
 *
 * A wrapper of a shim that does not record (the CUPTI backend preloaded, or
 * a copy preloaded without STREAMCHECK_PRELOAD=1) only calls the real
 * function.
 *
 * dlvsym is not interposed: the shim finds the real dlsym through it, and
 * no driver user looks up libcuda's unversioned names with it.
 *
 * Runtime names: a wrapper sees the driver call only, so events carry the
 * driver function's name (cuMemAllocAsync), as with the CUPTI backend's
 * default; the analyzer names the runtime function from the recorded
 * stack.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "drvcalls.h"

/* ---- the table's entry points ----
 * Each row of drvcalls.h has two ids: 2r, its own name, and 2r + 1, its
 * per-thread-default-stream variant (unused for PT_NONE rows). */

#define SC_IDS(name, decode, async, elem, pt, since, ...) SC_IPID_##name, SC_IPID_##name##_pt,
#define SC_IDS0(name, decode, async, elem, pt, since) SC_IPID_##name, SC_IPID_##name##_pt,
enum { SC_DRIVER_CALLS(SC_IDS, SC_IDS0) SC_IP_N };
#undef SC_IDS
#undef SC_IDS0
_Static_assert(SC_IP_N <= MAXCB, "interposed ids index sc_drv_calls");

/* Per row: its per-thread kind and the version it is handed out from. */
#define SC_ROWINFO(name, decode, async, elem, pt, since, ...) {pt, since},
#define SC_ROWINFO0(name, decode, async, elem, pt, since) {pt, since},
static const struct {
    int pt, since;
} rowinfo[] = {SC_DRIVER_CALLS(SC_ROWINFO, SC_ROWINFO0)};
#undef SC_ROWINFO
#undef SC_ROWINFO0

/* The real entry point of each id, NULL until found. */
static _Atomic(void *) real[SC_IP_N];

static _Atomic(void *) cuda_handle; /* libcuda, as dlopen returned it */
static _Atomic int ip_recording; /* this backend records */
_Atomic uint64_t sc_stat_gpa_swapped, sc_stat_gpa_by_name, sc_stat_dlsym_swapped, sc_stat_gpa_calls, sc_stat_gpa_failed;
char sc_stat_first_dlsym[64];

/* ---- the real dlsym ---- */

typedef void *(*dlsym_fn)(void *, const char *);
static _Atomic(dlsym_fn) real_dlsym_p;

SC_COLD SC_NOSAN static dlsym_fn find_real_dlsym(void) {
    /* Relative to this object, RTLD_NEXT is libc (or libdl before glibc 2.34). */
    static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"};
    void *f = NULL;
    for (size_t i = 0; !f && i < sizeof versions / sizeof versions[0]; i++) f = dlvsym(RTLD_NEXT, "dlsym", versions[i]);
    atomic_store(&real_dlsym_p, (dlsym_fn)f);
    return (dlsym_fn)f;
}

SC_NOSAN static inline dlsym_fn real_dlsym(void) {
    dlsym_fn f = atomic_load_explicit(&real_dlsym_p, memory_order_acquire);
    return f ? f : find_real_dlsym();
}

SC_NOSAN void *sc_dlsym_real(void *h, const char *name) {
    dlsym_fn f = real_dlsym();
    return f ? f(h, name) : NULL;
}

/* ---- finding real entry points ---- */

/* libcuda for the real entry points: the one the shim queries
 * (STREAMCHECK_LIBCUDA, else libcuda.so.1). */
static void *open_cuda(void) {
    void *c = atomic_load_explicit(&cuda_handle, memory_order_acquire);
    if (c) return c;
    return dlopen(sc_driver_path(), RTLD_NOW | RTLD_LOCAL); /* one search, as load_driver's */
}

/* The exported name of id ("cuMemAllocAsync", "cuMemAllocAsync_ptsz"). */
static void id_name(uint32_t id, char *buf, size_t len) {
    size_t n;
    const sc_api_row *rows = sc_api_rows(&n);
    snprintf(buf, len, "%s%s", id / 2 < n ? rows[id / 2].name : "",
             id % 2 == 0 ? "" : rowinfo[id / 2].pt == PT_DS ? "_ptds" : "_ptsz");
}

/* The real entry point of id, looked up on first use: by a program that
 * calls the driver before the shim started, or by a shim that does not
 * record. */
SC_COLD static void *resolve(uint32_t id) {
    int saved = errno;
    char name[128];
    id_name(id, name, sizeof name);
    void *h = open_cuda();
    void *f = h ? sc_dlsym_real(h, name) : NULL;
    if (!f) f = sc_dlsym_real(RTLD_NEXT, name); /* a program linked against another libcuda */
    if (f) atomic_store(&real[id], f);
    errno = saved;
    return f;
}

#ifndef CUDA_ERROR_NOT_FOUND
#define CUDA_ERROR_NOT_FOUND 500
#endif

/* A call of a wrapper while the backend waits to start: the process
 * reached the driver by a direct call. */
SC_COLD static void start_on_call(uint32_t id) {
    if (!sc_interpose_waiting()) return; /* the name is built only for a start */
    int saved = errno;
    char name[128];
    id_name(id, name, sizeof name);
    errno = saved;
    sc_interpose_ensure("a call of", name);
}

typedef CUresult (*ip_invoke)(void *fn, const void *pp);

/* Every wrapper's body: the call, recorded around it. */
SC_HOT __attribute__((noinline)) static CUresult ip_run(uint32_t id, void *pp, ip_invoke invoke) {
    void *fn = atomic_load_explicit(&real[id], memory_order_relaxed);
    if (__builtin_expect(!fn, 0)) { /* the backend's start fills real[] in */
        start_on_call(id);
        fn = atomic_load_explicit(&real[id], memory_order_relaxed);
        if (!fn && !(fn = resolve(id))) return CUDA_ERROR_NOT_FOUND;
    }
    if (!atomic_load_explicit(&ip_recording, memory_order_relaxed) || sc_callback_only ||
        atomic_load_explicit(&sc_trace_failed, memory_order_relaxed))
        return invoke(fn, pp);
    int saved = errno; /* the program must never see ours */
    sc_tstate *ts = sc_tls();
    if (!ts || ts->busy) {
        errno = saved;
        return invoke(fn, pp);
    }
    uint64_t t0 = 0; /* the clock a timed call's entry reads (CUPTI's correlation data) */
    sc_CUpti_CallbackData cb = {.callbackSite = CUPTI_API_ENTER, .functionParams = pp, .correlationData = &t0};
    if (sc_drv_calls[id].entry) sc_call_enter(ts, id, &cb);
    errno = saved;
    CUresult r = invoke(fn, pp);
    saved = errno;
    CUcontext ctx = NULL;
    if (sc_drv.cuCtxGetCurrent) sc_drv.cuCtxGetCurrent(&ctx);
    cb.callbackSite = CUPTI_API_EXIT;
    cb.functionReturnValue = &r;
    cb.context = ctx;
    sc_call_exit(ts, id, &cb);
    errno = saved;
    return r;
}

/* ---- the wrappers, from drvcalls.h ---- */

#define SC_P_GET(T, n) sc_args_->n

/* The per-thread variant's wrapper, for PT_SZ and PT_DS rows. */
#define SC_PTWRAP_PT_NONE(...)
#define SC_PTWRAP_PT_SZ(name, ...) SC_PTWRAP_(name, name##_ptsz, __VA_ARGS__)
#define SC_PTWRAP_PT_DS(name, ...) SC_PTWRAP_(name, name##_ptds, __VA_ARGS__)
#define SC_PTWRAP_(name, ptname, ...)                                                                                  \
    SC_EXPORT CUresult ptname(SC_MAP(SC_P_DECL, SC_COMMA, __VA_ARGS__)) {                                              \
        ip_p_##name sc_args_ = {SC_MAP(SC_P_NAME, SC_COMMA, __VA_ARGS__)};                                                    \
        return ip_run(SC_IPID_##name##_pt, &sc_args_, ip_call_##name);                                                        \
    }

#define SC_WRAP(name, decode, async, elem, pt, since, ...)                                                             \
    typedef struct {                                                                                                   \
        SC_MAP(SC_P_FIELD, SC_NOSEP, __VA_ARGS__)                                                                      \
    } ip_p_##name;                                                                                                     \
    static CUresult ip_call_##name(void *fn, const void *pp) {                                                         \
        const ip_p_##name *sc_args_ = pp;                                                                                   \
        return ((CUresult(*)(SC_MAP(SC_P_TYPE, SC_COMMA, __VA_ARGS__)))fn)(SC_MAP(SC_P_GET, SC_COMMA, __VA_ARGS__));   \
    }                                                                                                                  \
    SC_EXPORT CUresult name(SC_MAP(SC_P_DECL, SC_COMMA, __VA_ARGS__)) {                                                \
        ip_p_##name sc_args_ = {SC_MAP(SC_P_NAME, SC_COMMA, __VA_ARGS__)};                                                    \
        return ip_run(SC_IPID_##name, &sc_args_, ip_call_##name);                                                             \
    }                                                                                                                  \
    SC_PTWRAP_##pt(name, __VA_ARGS__)

#define SC_WRAP0(name, decode, async, elem, pt, since)                                                                 \
    static CUresult ip_call_##name(void *fn, const void *pp) {                                                         \
        (void)pp;                                                                                                      \
        return ((CUresult(*)(void))fn)();                                                                              \
    }                                                                                                                  \
    SC_EXPORT CUresult name(void) { return ip_run(SC_IPID_##name, NULL, ip_call_##name); }

SC_DRIVER_CALLS(SC_WRAP, SC_WRAP0)

/* The wrappers by id (NULL: a PT_NONE row's unused variant). */
#define SC_PTADDR_PT_NONE(name) NULL
#define SC_PTADDR_PT_SZ(name) (void *)name##_ptsz
#define SC_PTADDR_PT_DS(name) (void *)name##_ptds
#define SC_ADDRS(name, decode, async, elem, pt, since, ...) (void *)name, SC_PTADDR_##pt(name),
#define SC_ADDRS0(name, decode, async, elem, pt, since) (void *)name, NULL,
static void *const wrappers[SC_IP_N] = {SC_DRIVER_CALLS(SC_ADDRS, SC_ADDRS0)};

/* ---- cuGetProcAddress ---- */

/* Real entry point -> id + 1, for the entry points libcuda exports. */
static lfmap by_real;

/* "cuMemAlloc_v2" -> "cuMemAlloc": the name cuGetProcAddress is asked for. */
static size_t base_len(const char *name) {
    size_t n = strlen(name);
    const char *u = strrchr(name, '_');
    if (u && u[1] == 'v' && u[2] >= '1' && u[2] <= '9' && !u[3]) return (size_t)(u - name);
    return n;
}

/* CUDA 12.0 made cuGraphInstantiate cuGraphInstantiateWithFlags. */
static const struct {
    const char *asked;
    int since;
    const char *row;
} aliases[] = {{"cuGraphInstantiate", 12000, "cuGraphInstantiateWithFlags"}};

/* The id cuGetProcAddress hands out for symbol at cudaVersion with flags,
 * by the table's versions, or -1: for an entry point that is not one
 * libcuda exports. */
static int by_name(const char *symbol, int version, int pt) {
    size_t n;
    const sc_api_row *rows = sc_api_rows(&n);
    int best = -1, best_since = -1;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(symbol, aliases[i].asked) == 0 && version >= aliases[i].since) symbol = aliases[i].row;
    size_t sl = strlen(symbol);
    for (size_t r = 0; r < n; r++) {
        int since = rowinfo[r].since;
        if (strcmp(rows[r].name, symbol) == 0 && since == SC_OWN_NAME) return (int)(2 * r);
        if (since == SC_OWN_NAME || since > version || base_len(rows[r].name) != sl ||
            strncmp(rows[r].name, symbol, sl) != 0)
            continue;
        if (since > best_since) best = (int)r, best_since = since;
    }
    if (best < 0) return -1;
    return 2 * best + (pt && rowinfo[best].pt != PT_NONE);
}

/* The entry point to hand the program for symbol, whose real one is fn. */
static void *swap_entry(const char *symbol, void *fn, int version, unsigned long long flags) {
    uint64_t v;
    if (lfmap_get(&by_real, (uint64_t)(uintptr_t)fn, &v) && v > 0 && wrappers[v - 1]) {
        atomic_fetch_add_explicit(&sc_stat_gpa_swapped, 1, memory_order_relaxed);
        return wrappers[v - 1];
    }
    if (!symbol) return fn;
    /* Not an exported entry point: by the name, version and stream flags
     * asked for (CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM without
     * CU_GET_PROC_ADDRESS_LEGACY_STREAM asks for the _ptsz/_ptds variant). */
    int pt = (flags & 2) && !(flags & 1);
    int id = by_name(symbol, version, pt);
    if (id < 0 || !wrappers[id]) return fn;
    void *none = NULL;
    if (!atomic_compare_exchange_strong(&real[id], &none, fn) && none != fn) {
        /* The same entry point by another address: the first one found is called. */
    }
    atomic_fetch_add_explicit(&sc_stat_gpa_by_name, 1, memory_order_relaxed);
    return wrappers[id];
}

typedef CUresult (*gpa_fn)(const char *, void **, int, sc_ull);
typedef CUresult (*gpa2_fn)(const char *, void **, int, sc_ull, int *);
static _Atomic(void *) real_gpa, real_gpa2;

static void *gpa_real(_Atomic(void *) *slot, const char *name) {
    void *f = atomic_load(slot);
    if (f) return f;
    void *h = open_cuda();
    if (h) f = sc_dlsym_real(h, name);
    if (!f) f = sc_dlsym_real(RTLD_NEXT, name);
    if (f) atomic_store(slot, f);
    return f;
}

/* cuGetProcAddress itself, asked of cuGetProcAddress, is ours too. */
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, sc_ull flags);
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, sc_ull flags, int *symbolStatus);

static void *swap_gpa(void *fn) {
    if (fn && fn == atomic_load(&real_gpa)) return (void *)cuGetProcAddress;
    if (fn && fn == atomic_load(&real_gpa2)) return (void *)cuGetProcAddress_v2;
    return NULL;
}

static void after_gpa(CUresult r, const char *symbol, void **pfn, int version, sc_ull flags) {
    if (sc_stats) {
        atomic_fetch_add_explicit(&sc_stat_gpa_calls, 1, memory_order_relaxed);
        if (r != CUDA_SUCCESS) atomic_fetch_add_explicit(&sc_stat_gpa_failed, 1, memory_order_relaxed);
    }
    if (r != CUDA_SUCCESS || !pfn || !*pfn || !atomic_load_explicit(&ip_recording, memory_order_relaxed)) return;
    int saved = errno;
    void *g = swap_gpa(*pfn);
    *pfn = g ? g : swap_entry(symbol, *pfn, version, flags);
    errno = saved;
}

static _Atomic int reached;
int sc_interpose_reached(void) { return atomic_load_explicit(&reached, memory_order_relaxed); }

/* cuInit, for programs that call the driver directly or look it up with
 * dlsym: only so that a process whose other calls are none the shim
 * records (a device query) is known to have come through the shim. A
 * lookup alone proves nothing: under ncu the program's cudart looked up
 * cuGetProcAddress in libcuda and then took its entry points elsewhere. */
typedef CUresult (*init_fn)(unsigned int);
static _Atomic(void *) real_init;
SC_EXPORT CUresult cuInit(unsigned int flags) {
    sc_interpose_ensure("cuInit", NULL);
    atomic_store_explicit(&reached, 1, memory_order_relaxed);
    init_fn f = (init_fn)gpa_real(&real_init, "cuInit");
    if (!f) return CUDA_ERROR_NOT_FOUND;
    return f(flags);
}

SC_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, sc_ull flags) {
    sc_interpose_ensure("cuGetProcAddress", NULL);
    atomic_store_explicit(&reached, 1, memory_order_relaxed);
    gpa_fn f = (gpa_fn)gpa_real(&real_gpa, "cuGetProcAddress");
    if (!f) return CUDA_ERROR_NOT_FOUND;
    CUresult r = f(symbol, pfn, cudaVersion, flags);
    after_gpa(r, symbol, pfn, cudaVersion, flags);
    return r;
}

SC_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, sc_ull flags,
                                       int *symbolStatus) {
    sc_interpose_ensure("cuGetProcAddress_v2", NULL);
    atomic_store_explicit(&reached, 1, memory_order_relaxed);
    gpa2_fn f = (gpa2_fn)gpa_real(&real_gpa2, "cuGetProcAddress_v2");
    if (!f) return CUDA_ERROR_NOT_FOUND;
    CUresult r = f(symbol, pfn, cudaVersion, flags, symbolStatus);
    after_gpa(r, symbol, pfn, cudaVersion, flags);
    return r;
}

/* ---- dlsym ---- */

/* What a lookup of name in libcuda gives the program: our wrapper, if we
 * record what the real entry point real is. */
SC_COLD static void *swap_dlsym(const char *name, void *f) {
    if (!f || !name) return f;
    int saved = errno;
    void *g = swap_gpa(f);
    if (!g && strcmp(name, "cuInit") == 0) g = (void *)cuInit;
    if (!g) {
        uint64_t v;
        if (lfmap_get(&by_real, (uint64_t)(uintptr_t)f, &v) && v > 0 && wrappers[v - 1]) g = wrappers[v - 1];
    }
    errno = saved;
    if (!g) return f;
    if (atomic_fetch_add_explicit(&sc_stat_dlsym_swapped, 1, memory_order_relaxed) == 0 && sc_stats)
        snprintf(sc_stat_first_dlsym, sizeof sc_stat_first_dlsym, "%s", name);
    return g;
}

/* An NCCL function's name: "nccl" and more. */
SC_NOSAN static inline int nccl_name(const char *n) {
    return n && n[0] == 'n' && n[1] == 'c' && n[2] == 'c' && n[3] == 'l' && n[4];
}

/* With STREAMCHECK_STATS=1, a lookup of cuGetProcAddress in a library other
 * than the libcuda the shim loaded: a tool (a profiler's stand-in libcuda)
 * may hand the program entry points past the shim; the stats say which. */
_Atomic uint64_t sc_stat_foreign_gpa;
char sc_stat_foreign_gpa_lib[128];

SC_NOSAN static inline int gpa_name(const char *n) {
    return n && n[0] == 'c' && n[1] == 'u' && n[2] == 'G' && strncmp(n, "cuGetProcAddress", 16) == 0;
}

SC_COLD static void *note_foreign_gpa(void *handle, const char *name) {
    void *f = sc_dlsym_real(handle, name);
    Dl_info info;
    if (atomic_fetch_add_explicit(&sc_stat_foreign_gpa, 1, memory_order_relaxed) == 0 && f && dladdr(f, &info) &&
        info.dli_fname)
        snprintf(sc_stat_foreign_gpa_lib, sizeof sc_stat_foreign_gpa_lib, "%s", info.dli_fname);
    return f;
}

/* While the backend waits to start: a lookup of a driver name ("cu...") in
 * a libcuda handle, or of an NCCL name in a library, is the process
 * reaching CUDA (cudart looks cuGetProcAddress up so). */
SC_COLD SC_NOSAN static void start_on_lookup(void *handle, const char *name) {
    if (!handle || handle == RTLD_NEXT || handle == RTLD_DEFAULT || !name) return;
    if ((name[0] == 'c' && name[1] == 'u' && sc_is_driver_handle(handle)) || nccl_name(name))
        sc_interpose_ensure("dlsym of", name);
}

/* Anything but a lookup in libcuda, or of an NCCL name in a library (a
 * program that dlopens libnccl), goes on to the real dlsym as a tail call:
 * dlsym(RTLD_NEXT, ...) searches after the caller's object, which glibc
 * finds from the return address. A lookup in a library's handle does not
 * depend on the caller. */
SC_EXPORT SC_NOSAN void *dlsym(void *handle, const char *name) {
    /* sc_interpose_waiting's test, written out: an inline function without
     * SC_NOSAN would be an instrumented call here, which a sanitizer
     * runtime that looks dlsym up at its own start cannot take. */
    int ip = atomic_load_explicit(&sc_ip_state, memory_order_relaxed);
    if (__builtin_expect(ip == SC_IP_PENDING || ip == SC_IP_STARTING, 0)) start_on_lookup(handle, name);
    if (handle && handle == atomic_load_explicit(&cuda_handle, memory_order_relaxed) &&
        atomic_load_explicit(&ip_recording, memory_order_relaxed))
        return swap_dlsym(name, sc_dlsym_real(handle, name));
    if (handle && handle != RTLD_NEXT && nccl_name(name) && atomic_load_explicit(&sc_active, memory_order_relaxed))
        return sc_nccl_swap(name, sc_dlsym_real(handle, name));
    if (__builtin_expect(sc_stats, 0) && handle && handle != RTLD_NEXT && gpa_name(name))
        return note_foreign_gpa(handle, name);
    dlsym_fn f = real_dlsym();
    if (__builtin_expect(!f, 0)) return NULL;
    return f(handle, name);
}

/* ---- setup ---- */

int sc_interpose_setup(void *libcuda, char *err, size_t errlen) {
    size_t n;
    const sc_api_row *rows = sc_api_rows(&n);
    atomic_store(&cuda_handle, libcuda);
    int found = 0;
    atomic_store(&real_gpa, sc_dlsym_real(libcuda, "cuGetProcAddress"));
    atomic_store(&real_gpa2, sc_dlsym_real(libcuda, "cuGetProcAddress_v2"));
    sc_lock_acquire();
    for (size_t r = 0; r < n; r++) {
        for (int v = 0; v < 2; v++) {
            uint32_t id = (uint32_t)(2 * r + v);
            if (v && rowinfo[r].pt == PT_NONE) continue;
            char name[128];
            id_name(id, name, sizeof name);
            sc_call_info_set(id, &rows[r], v, name);
            void *f = sc_dlsym_real(libcuda, name);
            if (!f) continue;
            found++;
            atomic_store(&real[id], f);
            uint64_t old;
            if (!lfmap_get(&by_real, (uint64_t)(uintptr_t)f, &old)) lfmap_put_locked(&by_real, (uint64_t)(uintptr_t)f, id + 1);
        }
    }
    sc_lock_release();
    if (!found) {
        snprintf(err, errlen, "the driver library exports none of the functions the shim records");
        return 0;
    }
    atomic_store(&sc_active, 1);
    atomic_store(&ip_recording, 1);
    return 1;
}
