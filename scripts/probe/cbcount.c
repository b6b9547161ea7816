/* cbcount: an LD_PRELOAD probe for the GPU machine. It subscribes to CUPTI's
 * driver and runtime callbacks, counts every call by name, and prints the
 * counts at exit to $CBCOUNT_OUT (default stderr). With CBCOUNT_ALLOCS=1 it
 * also prints each driver call whose name mentions Alloc, Free, Map, Create
 * or ExportTable with its first pointer-sized parameter words, so an
 * allocation path the shim does not record shows up with its addresses.
 * With CBCOUNT_REWRITE=1 it rewrites cuLaunchHostFunc's fn/userData at API
 * enter to its own trampoline and counts how often the trampoline runs: it
 * answers whether the driver honours a rewritten CUPTI params struct.
 * Build: scripts/probe/cbcount.sh cbcount.so
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cupti.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXID 4096
static _Atomic unsigned long drv[MAXID], rt[MAXID];
static _Atomic unsigned long tramp_runs, rewrites;
static CUpti_SubscriberHandle sub;
static int allocs, rewrite;
static FILE *out;

typedef struct { CUhostFn fn; void *ud; } hop;
static void tramp(void *p) {
    hop *h = p;
    atomic_fetch_add(&tramp_runs, 1);
    h->fn(h->ud);
    free(h);
}

static void CUPTIAPI cb(void *u, CUpti_CallbackDomain dom, CUpti_CallbackId id, const void *data) {
    (void)u;
    const CUpti_CallbackData *d = data;
    if (id >= MAXID) return;
    if (dom == CUPTI_CB_DOMAIN_DRIVER_API) {
        if (d->callbackSite == CUPTI_API_ENTER) {
            atomic_fetch_add(&drv[id], 1);
            if (rewrite && (id == CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc ||
                            id == CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc_ptsz)) {
                cuLaunchHostFunc_params *p = (cuLaunchHostFunc_params *)d->functionParams;
                hop *h = malloc(sizeof *h);
                h->fn = p->fn; h->ud = p->userData;
                p->fn = tramp; p->userData = h;
                atomic_fetch_add(&rewrites, 1);
            }
        } else if (allocs) {
            const char *n = d->functionName;
            if (strstr(n, "Alloc") || strstr(n, "Free") || strstr(n, "Map") || strstr(n, "Create") || strstr(n, "Reserve") ||
                strstr(n, "ExportTable") || strstr(n, "GetProcAddress")) {
                const unsigned long *w = d->functionParams;
                CUresult r = d->functionReturnValue ? *(const CUresult *)d->functionReturnValue : 0;
                unsigned long v0 = 0;
                if (w && w[0] > 4096 && (strstr(n, "Alloc") || strstr(n, "Create"))) v0 = *(unsigned long *)w[0];
                fprintf(out, "call %s r=%d w0=%#lx w1=%#lx w2=%#lx *w0=%#lx\n", n, r, w ? w[0] : 0, w ? w[1] : 0,
                        w ? w[2] : 0, v0);
            }
        }
    } else if (dom == CUPTI_CB_DOMAIN_RUNTIME_API && d->callbackSite == CUPTI_API_ENTER) {
        atomic_fetch_add(&rt[id], 1);
    }
}

static void report(void) {
    if (sub) cuptiUnsubscribe(sub);
    for (int i = 0; i < MAXID; i++) {
        const char *n = NULL;
        if (drv[i] && cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, i, &n) == CUPTI_SUCCESS)
            fprintf(out, "drv %8lu %s\n", (unsigned long)drv[i], n);
        if (rt[i] && cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, i, &n) == CUPTI_SUCCESS)
            fprintf(out, "rt  %8lu %s\n", (unsigned long)rt[i], n);
    }
    fprintf(out, "hostfn rewrites %lu trampoline runs %lu\n", (unsigned long)rewrites, (unsigned long)tramp_runs);
    fflush(out);
}

__attribute__((constructor)) static void init(void) {
    const char *o = getenv("CBCOUNT_OUT");
    out = o ? fopen(o, "a") : stderr;
    if (!out) out = stderr;
    allocs = getenv("CBCOUNT_ALLOCS") != NULL;
    rewrite = getenv("CBCOUNT_REWRITE") != NULL;
    if (cuptiSubscribe(&sub, cb, NULL) != CUPTI_SUCCESS) { fprintf(out, "cbcount: cuptiSubscribe failed\n"); return; }
    cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API);
    cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
    atexit(report);
}
