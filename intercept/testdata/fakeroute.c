/*
 * fakeroute.c: the fake libcuda's driver entry points under their real
 * names (fakedrv.h), and the routes by which the fake app reaches them, for
 * the tests of the interposition backend. Built into the fake library with
 * fakecupti.c.
 *
 * With FAKE_ROUTE set, each driver call the fake app makes (fk_driver_enter
 * ... fk_driver_exit, its output parameters filled in between) becomes one
 * call of the real entry point at fk_driver_exit, made
 *   plt    directly (through this library's PLT, as a program linked
 *          against libcuda calls it),
 *   dlsym  through dlsym on this library's handle,
 *   gpa    through cuGetProcAddress_v2 (itself found with dlsym, as cudart
 *          finds it), asked for the name without its version suffix, at the
 *          row's version, with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
 *          for a per-thread variant,
 *   gpa1   through cuGetProcAddress (v1), called directly.
 * The entry point's body delivers the CUPTI callbacks, checks that it got
 * the arguments the app passed, and returns the result the app asked for;
 * fk_driver_exit checks that the call returned it and ran the body once.
 * Anything else aborts the app: the test sees a crash.
 *
 * FAKE_GPA_INTERNAL=1 makes cuGetProcAddress hand out entry points that
 * are not the exported ones (another address, the same body), as a driver
 * may.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakecuda.h"
#include "fakedrv.h"

void fk_cb_enter(const char *name, void *params, const char *symbol);
void fk_cb_exit(const char *name, void *params, CUresult result, const char *symbol);
void fk_set_kernel_name(void *handle, const char *name);

#define CUDA_ERROR_NOT_FOUND 500
#define GPA_PER_THREAD 2 /* CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM */

enum { ROUTE_UNSET = -1, ROUTE_NONE, ROUTE_PLT, ROUTE_DLSYM, ROUTE_GPA, ROUTE_GPA1 };
static int route = ROUTE_UNSET;

int fk_route(void) {
    if (route == ROUTE_UNSET) {
        const char *r = getenv("FAKE_ROUTE");
        route = !r || !*r ? ROUTE_NONE
                : strcmp(r, "plt") == 0   ? ROUTE_PLT
                : strcmp(r, "dlsym") == 0 ? ROUTE_DLSYM
                : strcmp(r, "gpa") == 0   ? ROUTE_GPA
                : strcmp(r, "gpa1") == 0  ? ROUTE_GPA1
                                          : (fprintf(stderr, "fake: FAKE_ROUTE=%s: not plt, dlsym, gpa or gpa1\n", r),
                                             abort(), ROUTE_NONE);
    }
    return route;
}

/* The call the app is making: what the entry point must get and return. */
static __thread struct {
    const char *name;
    const void *params;
    CUresult result;
    const char *symbol;
    int calls;
} expect;

typedef int (*same_fn)(const void *got, const void *want);

static CUresult body(const char *name, void *args, same_fn same) {
    if (!expect.name) {
        fprintf(stderr, "fake: %s called outside a call of the app's\n", name);
        abort();
    }
    fk_cb_enter(name, args, expect.symbol);
    if (strcmp(expect.name, name) != 0) {
        fprintf(stderr, "fake: the app called %s, the driver got %s\n", expect.name, name);
        abort();
    }
    if (!same(args, expect.params)) {
        fprintf(stderr, "fake: %s got other arguments than the app passed\n", name);
        abort();
    }
    expect.calls++;
    fk_cb_exit(name, args, expect.result, expect.symbol);
    return expect.result;
}

/* ---- the entry points, from fakedrv.h ---- */

#define NARGS(...) NARGS_(__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, N, ...) N
#define CAT(a, b) CAT_(a, b)
#define CAT_(a, b) a##b
#define MAP(m, sep, ...) CAT(MAP_, NARGS(__VA_ARGS__))(m, sep, __VA_ARGS__)
#define MAP_1(m, s, a) m a
#define MAP_2(m, s, a, ...) m a s() MAP_1(m, s, __VA_ARGS__)
#define MAP_3(m, s, a, ...) m a s() MAP_2(m, s, __VA_ARGS__)
#define MAP_4(m, s, a, ...) m a s() MAP_3(m, s, __VA_ARGS__)
#define MAP_5(m, s, a, ...) m a s() MAP_4(m, s, __VA_ARGS__)
#define MAP_6(m, s, a, ...) m a s() MAP_5(m, s, __VA_ARGS__)
#define MAP_7(m, s, a, ...) m a s() MAP_6(m, s, __VA_ARGS__)
#define MAP_8(m, s, a, ...) m a s() MAP_7(m, s, __VA_ARGS__)
#define MAP_9(m, s, a, ...) m a s() MAP_8(m, s, __VA_ARGS__)
#define MAP_10(m, s, a, ...) m a s() MAP_9(m, s, __VA_ARGS__)
#define MAP_11(m, s, a, ...) m a s() MAP_10(m, s, __VA_ARGS__)
#define COMMA() ,
#define AND() &&
#define NOSEP()
#define P_FIELD(T, n) T n;
#define P_DECL(T, n) T n
#define P_TYPE(T, n) T
#define P_NAME(T, n) n
#define P_GET(T, n) w_->n
#define P_SAME(T, n) memcmp(&g_->n, &w_->n, sizeof g_->n) == 0

#define ENTRY(name, base, ver, pt, ...)                                                                         \
    typedef struct {                                                                                            \
        MAP(P_FIELD, NOSEP, __VA_ARGS__)                                                                        \
    } fkp_##name;                                                                                               \
    static int same_##name(const void *got, const void *want) {                                                 \
        const fkp_##name *g_ = got, *w_ = want;                                                                 \
        return MAP(P_SAME, AND, __VA_ARGS__);                                                                   \
    }                                                                                                           \
    static CUresult impl_##name(MAP(P_DECL, COMMA, __VA_ARGS__)) {                                              \
        fkp_##name a_ = {MAP(P_NAME, COMMA, __VA_ARGS__)};                                                      \
        return body(#name, &a_, same_##name);                                                                   \
    }                                                                                                           \
    /* The same body at another address: what FAKE_GPA_INTERNAL hands out. */                                  \
    static CUresult internal_##name(MAP(P_DECL, COMMA, __VA_ARGS__)) {                                          \
        fkp_##name a_ = {MAP(P_NAME, COMMA, __VA_ARGS__)};                                                      \
        return body(#name, &a_, same_##name) + 0 * __LINE__;                                                    \
    }                                                                                                           \
    extern __typeof(impl_##name) name __attribute__((alias("impl_" #name), visibility("default")));            \
    static CUresult invoke_##name(void *fn, const void *want) {                                                 \
        const fkp_##name *w_ = want;                                                                            \
        return ((CUresult(*)(MAP(P_TYPE, COMMA, __VA_ARGS__)))fn)(MAP(P_GET, COMMA, __VA_ARGS__));              \
    }                                                                                                           \
    static CUresult plt_##name(const void *want) {                                                              \
        const fkp_##name *w_ = want;                                                                            \
        return name(MAP(P_GET, COMMA, __VA_ARGS__));                                                            \
    }

#define ENTRY0(name, base, ver, pt)                                                                             \
    static int same_##name(const void *got, const void *want) { return (void)got, (void)want, 1; }              \
    static CUresult impl_##name(void) { return body(#name, NULL, same_##name); }                                \
    static CUresult internal_##name(void) { return body(#name, NULL, same_##name) + 0 * __LINE__; }            \
    extern __typeof(impl_##name) name __attribute__((alias("impl_" #name), visibility("default")));            \
    static CUresult invoke_##name(void *fn, const void *want) { return (void)want, ((CUresult(*)(void))fn)(); } \
    static CUresult plt_##name(const void *want) { return (void)want, name(); }

FAKE_DRIVER(ENTRY, ENTRY0)

static const struct row {
    const char *name, *base;
    int version, pt;
    void *impl, *internal;
    CUresult (*invoke)(void *fn, const void *params);
    CUresult (*plt)(const void *params);
} rows[] = {
#define ROW(name, base, ver, pt, ...) {#name, #base, ver, pt, (void *)impl_##name, (void *)internal_##name, invoke_##name, plt_##name},
#define ROW0(name, base, ver, pt) ROW(name, base, ver, pt)
    FAKE_DRIVER(ROW, ROW0)
#undef ROW
#undef ROW0
};
#define NROWS (sizeof rows / sizeof rows[0])

static const struct row *row_named(const char *name) {
    for (size_t i = 0; i < NROWS; i++)
        if (strcmp(rows[i].name, name) == 0) return &rows[i];
    return NULL;
}

/* ---- cuGetProcAddress ---- */

typedef CUresult (*gpa_fn)(const char *, void **, int, unsigned long long);
typedef CUresult (*gpa2_fn)(const char *, void **, int, unsigned long long, int *);

static CUresult impl_cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags,
                                         int *status);
static CUresult impl_cuGetProcAddress(const char *symbol, void **pfn, int version, unsigned long long flags) {
    return impl_cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}

/* The row asked for: of base symbol, the highest version not above the one
 * asked for, the per-thread variant if flags ask for it and there is one.
 * Status 1: no such symbol, 2: the version asked for is too old. */
static CUresult impl_cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags,
                                         int *status) {
    int st = 1;
    const struct row *best = NULL;
    int pt = (flags & GPA_PER_THREAD) && !(flags & 1); /* CU_GET_PROC_ADDRESS_LEGACY_STREAM wins */
    if (pfn) *pfn = NULL;
    if (strcmp(symbol, "cuGetProcAddress") == 0) {
        if (pfn) *pfn = version >= 12000 ? (void *)impl_cuGetProcAddress_v2 : (void *)impl_cuGetProcAddress;
        if (status) *status = 0;
        return 0;
    }
    for (int want_pt = pt; want_pt >= 0 && !best; want_pt--)
        for (size_t i = 0; i < NROWS; i++) {
            if (strcmp(rows[i].base, symbol) != 0) continue;
            if (st == 1) st = 2;
            if (rows[i].pt != want_pt || rows[i].version > version) continue;
            if (!best || rows[i].version > best->version) best = &rows[i];
        }
    if (!best) {
        if (status) *status = st;
        return CUDA_ERROR_NOT_FOUND;
    }
    const char *in = getenv("FAKE_GPA_INTERNAL");
    if (pfn) *pfn = in && strcmp(in, "1") == 0 ? best->internal : best->impl;
    if (status) *status = 0;
    return 0;
}
extern __typeof(impl_cuGetProcAddress) cuGetProcAddress
    __attribute__((alias("impl_cuGetProcAddress"), visibility("default")));
extern __typeof(impl_cuGetProcAddress_v2) cuGetProcAddress_v2
    __attribute__((alias("impl_cuGetProcAddress_v2"), visibility("default")));

/* ---- the routes ---- */

/* This library, as dlopen names it. */
static void *self(void) {
    Dl_info info;
    if (!dladdr((void *)fk_route, &info) || !info.dli_fname) abort();
    void *h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    if (!h) abort();
    return h;
}

/* A device query's driver use: cuInit, found with dlsym on this library,
 * and no call the shim records. */
int fk_query(void) {
    CUresult (*init)(unsigned int) = (CUresult(*)(unsigned int))dlsym(self(), "cuInit");
    return init ? (int)init(0) : -1;
}

void fk_route_call(const char *name, void *params, CUresult result, const char *symbol) {
    const struct row *r = row_named(name);
    if (!r) return; /* an entry point the shim does not record: nothing to reach it by */
    if (symbol && strncmp(name, "cuLaunch", 8) == 0) /* the name the driver gives the kernel's handle */
        fk_set_kernel_name(((void **)params)[strncmp(name, "cuLaunchKernelEx", 16) == 0 ? 1 : 0], symbol);
    expect.name = name;
    expect.params = params;
    expect.result = result;
    expect.symbol = symbol;
    expect.calls = 0;
    CUresult got;
    void *fn = NULL;
    int status = -1;
    CUresult q = 0;
    switch (fk_route()) {
    case ROUTE_PLT:
        got = r->plt(params);
        break;
    case ROUTE_DLSYM:
        fn = dlsym(self(), name);
        if (!fn) abort();
        got = r->invoke(fn, params);
        break;
    case ROUTE_GPA: {
        gpa2_fn gpa = (gpa2_fn)dlsym(self(), "cuGetProcAddress_v2");
        if (!gpa) abort();
        q = gpa(r->base, &fn, r->version, r->pt ? GPA_PER_THREAD : 0, &status);
        if (q != 0 || status != 0 || !fn) {
            fprintf(stderr, "fake: cuGetProcAddress_v2(%s, %d): %d, status %d\n", r->base, r->version, q, status);
            abort();
        }
        got = r->invoke(fn, params);
        break;
    }
    default:
        q = cuGetProcAddress(r->base, &fn, r->version, r->pt ? GPA_PER_THREAD : 0);
        if (q != 0 || !fn) {
            fprintf(stderr, "fake: cuGetProcAddress(%s, %d): %d\n", r->base, r->version, q);
            abort();
        }
        got = r->invoke(fn, params);
        break;
    }
    if (expect.calls != 1 || got != result) {
        fprintf(stderr, "fake: %s ran %d times and returned %d, want once and %d\n", name, expect.calls, got, result);
        abort();
    }
    expect.name = NULL;
}

/* The call the app is about to make of name through an entry point it
 * holds. */
void fk_route_expect(const char *name, const void *params, CUresult result) {
    expect.name = name;
    expect.params = params;
    expect.result = result;
    expect.symbol = NULL;
    expect.calls = 0;
}

/* For the app's check of cuGetProcAddress's answers: the query, made
 * directly (through the PLT), with its status. */
CUresult fk_query_gpa(const char *symbol, void **pfn, int version, unsigned long long flags, int *status) {
    return cuGetProcAddress_v2(symbol, pfn, version, flags, status);
}

/* Whether fn is this library's own entry point of name (not a wrapper). */
int fk_is_own(const char *name, void *fn) {
    const struct row *r = row_named(name);
    return r && (fn == r->impl || fn == r->internal);
}
