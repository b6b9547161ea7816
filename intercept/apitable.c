//go:build ignore

/*
 * apitable.c: the driver functions the shim records, each with its
 * decoder (decode.h), and the setup that finds their callback ids.
 *
 * Only the callback ids we need are enabled; they are found once at start by
 * name (cuptiGetCallbackName), so no CUPTI header and no numeric id is built
 * in. RUNTIME_API callbacks, when enabled, only name the runtime function in
 * progress (callbacks.c, the CUPTI backend's callback).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "drvcalls.h"

/* The rows of drvcalls.h: name, decoder, async, elem, and the size of
 * the parameters' "_params" struct. */
#define SC_ROW(name, decode, async, elem, pt, since, ...)                                                              \
    {#name, decode, async, elem, sizeof(struct { SC_MAP(SC_P_FIELD, SC_NOSEP, __VA_ARGS__) })},
#define SC_ROW0(name, decode, async, elem, pt, since) {#name, decode, async, elem, 0},
static const sc_api_row table[] = {SC_DRIVER_CALLS(SC_ROW, SC_ROW0)};
#undef SC_ROW
#undef SC_ROW0

const sc_api_row *sc_api_rows(size_t *n) {
    *n = sizeof table / sizeof table[0];
    return table;
}

/* Runtime functions whose name we carry onto the driver call inside them
 * (compared after dropping version and _ptsz/_ptds suffixes). */
static const char *rt_exact[] = {
    "cudaMalloc", "cudaMallocAsync", "cudaMallocFromPoolAsync", "cudaMallocManaged", "cudaMallocPitch",
    "cudaFree", "cudaFreeAsync", "cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchCooperativeKernel",
    "cudaDeviceSynchronize", "cudaThreadSynchronize", "cudaLaunchHostFunc", "cudaStreamAddCallback",
    "cudaGraphLaunch", "cudaGraphInstantiate", "cudaGraphInstantiateWithFlags", "cudaGraphInstantiateWithParams",
    "cudaGraphExecUpdate", "cudaMemPoolCreate", "cudaStreamCreate", "cudaStreamCreateWithFlags",
    "cudaStreamCreateWithPriority", "cudaStreamDestroy", "cudaStreamWaitEvent", "cudaStreamSynchronize",
    "cudaStreamQuery", "cudaStreamBeginCapture", "cudaStreamBeginCaptureToGraph", "cudaStreamEndCapture",
    "cudaMemPoolExportToShareableHandle", "cudaMemPoolImportFromShareableHandle", "cudaMemPoolExportPointer",
    "cudaMemPoolImportPointer", "cudaIpcGetEventHandle", "cudaIpcOpenEventHandle", "cudaIpcGetMemHandle",
    "cudaIpcOpenMemHandle", "cudaIpcCloseMemHandle", "cudaMallocHost", "cudaHostAlloc", "cudaFreeHost",
    "cudaHostRegister", "cudaHostUnregister", "cudaMemPoolSetAttribute", "cudaDeviceSetMemPool", "cudaMemSetMemPool",
    "cudaMemPoolTrimTo", "cudaMemPrefetchAsync", "cudaGetSymbolAddress",
};
static const char *rt_prefix[] = {"cudaMemcpy", "cudaMemset", "cudaEvent"};

/* The frees and destroys, announced at their entry (releases.c). */
static uint8_t release_kind(sc_decoder d) {
    if (d == sc_dec_free || d == sc_dec_free_async || d == sc_dec_ipc_mem_close || d == sc_dec_free_host)
        return SC_REL_MEMORY;
    if (d == sc_dec_vmm_unmap) return SC_REL_UNMAP;
    if (d == sc_dec_stream_destroy) return SC_REL_STREAM;
    if (d == sc_dec_event_destroy) return SC_REL_EVENT;
    return 0;
}

/* The synchronous allocations and frees, whose time inside the call is
 * recorded (model.Event.Dur): their entry callback reads the clock. No
 * other call pays for it. */
static uint8_t timed(sc_decoder d) {
    return d == sc_dec_malloc || d == sc_dec_malloc_pitch || d == sc_dec_malloc_host || d == sc_dec_host_register ||
           d == sc_dec_module_global ||
           d == sc_dec_free || d == sc_dec_free_host;
}

sc_drv_info sc_drv_calls[MAXCB];
char *sc_drv_disp[MAXCB], *sc_rt_disp[MAXCB];
_Atomic uint32_t sc_drv_sid[MAXCB], sc_rt_sid[MAXCB];

/* "cudaMemcpyAsync_ptsz_v7000" -> "cudaMemcpyAsync"; "cuMemAlloc_v2" -> "cuMemAlloc". */
const char *sc_display_name(const char *fn, char *buf, size_t n) {
    snprintf(buf, n, "%s", fn ? fn : "");
    for (;;) {
        size_t len = strlen(buf);
        if (len > 5 && (strcmp(buf + len - 5, "_ptsz") == 0 || strcmp(buf + len - 5, "_ptds") == 0)) {
            buf[len - 5] = 0;
            continue;
        }
        char *u = strrchr(buf, '_');
        if (u && u[1] == 'v' && u[2] >= '0' && u[2] <= '9' && u != buf) {
            char *q = u + 2;
            while (*q >= '0' && *q <= '9') q++;
            if (*q == 0) {
                *u = 0;
                continue;
            }
        }
        return buf;
    }
}

/* What the per-call path is told of call id (a CUPTI callback id, or an
 * interposed entry point's index): row's decoder, and whether the entry
 * point is a per-thread-default-stream one. name is the exported name. */
void sc_call_info_set(uint32_t id, const sc_api_row *row, int pt, const char *name) {
    char disp[256];
    uint8_t rel = release_kind(row->decode), tm = timed(row->decode);
    uint8_t hf = row->decode == sc_dec_host_func;
    sc_drv_calls[id] = (sc_drv_info){row->decode, row->async, row->elem, (uint8_t)pt, rel, tm, rel || tm || hf, hf,
                                      row->psize};
    sc_drv_disp[id] = strdup(sc_display_name(name, disp, sizeof disp));
}

static int has_suffix(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

int sc_callbacks_setup(CUptiResult (*get_name)(CUpti_CallbackDomain, uint32_t, const char **),
                       CUptiResult (*enable)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId),
                       CUpti_SubscriberHandle sub, char *err, size_t errlen) {
    int ndrv = 0, nrt = 0;
    char base[256], disp[256];
    atomic_store(&sc_active, 1);
    for (uint32_t cbid = 1; cbid < MAXCB; cbid++) {
        const char *name = NULL;
        if (get_name(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) != CUPTI_SUCCESS || !name) continue;
        int pt = has_suffix(name, "_ptsz") || has_suffix(name, "_ptds");
        snprintf(base, sizeof base, "%s", name);
        if (pt) base[strlen(base) - 5] = 0;
        for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
            if (strcmp(base, table[i].name) != 0) continue;
            sc_call_info_set(cbid, &table[i], pt, name);
            if (enable(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, cbid) == CUPTI_SUCCESS)
                ndrv++;
            else
                sc_drv_calls[cbid].decode = NULL;
            break;
        }
    }
    /* Runtime-API callbacks are off unless STREAMCHECK_RUNTIME_NAMES=1:
     * measured on an H200 they made a launch-bound loop 1.37x slower, against
     * 0.98x with driver callbacks alone (bench/results/gpu-overhead.txt).
     * Events carry the driver function's name; the analyzer recovers the
     * runtime name (cudaMallocAsync) from the recorded stack. */
    const char *rn = getenv("STREAMCHECK_RUNTIME_NAMES");
    int runtime_names = rn && strcmp(rn, "1") == 0;
    for (uint32_t cbid = 1; runtime_names && cbid < MAXCB; cbid++) {
        const char *name = NULL;
        if (get_name(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) != CUPTI_SUCCESS || !name) continue;
        sc_display_name(name, disp, sizeof disp);
        int want = 0;
        for (size_t i = 0; !want && i < sizeof rt_exact / sizeof rt_exact[0]; i++) want = strcmp(disp, rt_exact[i]) == 0;
        for (size_t i = 0; !want && i < sizeof rt_prefix / sizeof rt_prefix[0]; i++)
            want = strncmp(disp, rt_prefix[i], strlen(rt_prefix[i])) == 0;
        if (!want) continue;
        sc_rt_disp[cbid] = strdup(disp);
        if (enable(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, cbid) == CUPTI_SUCCESS) nrt++;
    }
    if (ndrv == 0) {
        atomic_store(&sc_active, 0);
        snprintf(err, errlen, "no driver API callback could be enabled (%d runtime)", nrt);
        return 0;
    }
    return 1;
}
