//go:build ignore

/*
 * callbacks.c: the CUPTI callback and the per-function handlers that turn a
 * driver call into an event.
 *
 * Only the callback ids we need are enabled; they are found once at start by
 * name (cuptiGetCallbackName), so no CUPTI header and no numeric id is built
 * in. Events are recorded at the exit site of DRIVER_API callbacks, where the
 * result and the returned handles and pointers are known; every runtime call
 * reaches the driver, so this sees runtime users, driver users, static cudart
 * and CuPy alike. RUNTIME_API callbacks only remember, per thread, which
 * runtime function is in progress, so the driver call inside it is recorded
 * once, under the name the program used ("cudaMallocAsync").
 *
 * The path is plain C with no allocation after a thread's first call: a
 * reentrancy flag, a few table reads, the unwind, and one locked append.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim.h"
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#define MAXCB 4096

enum {
    H_NONE = 0,
    H_STREAM_CREATE,
    H_STREAM_CREATE_PRIO,
    H_STREAM_DESTROY,
    H_EVENT_CREATE,
    H_EVENT_RECORD,
    H_EVENT_DESTROY,
    H_STREAM_WAIT,
    H_STREAM_SYNC,
    H_EVENT_SYNC,
    H_CTX_SYNC,
    H_STREAM_QUERY,
    H_EVENT_QUERY,
    H_MALLOC_ASYNC,
    H_MALLOC_POOL,
    H_MALLOC,
    H_MALLOC_PITCH,
    H_FREE_ASYNC,
    H_FREE,
    H_LAUNCH,
    H_LAUNCH_COOP,
    H_LAUNCH_EX,
    H_CPY_UNIFIED,
    H_CPY_HTOD,
    H_CPY_DTOH,
    H_CPY_DTOD,
    H_CPY_PEER,
    H_CPY_2D,
    H_CPY_3D,
    H_CPY_3DPEER,
    H_CPY_BATCH,  /* cuMemcpyBatchAsync; elem 1: with failIdx (CUDA 12.8), 2: _v2, 3: cuMemcpyWithAttributesAsync */
    H_CPY_3DBATCH, /* cuMemcpy3DBatchAsync; elem 1: with failIdx, 2: _v2, 3: cuMemcpy3DWithAttributesAsync */
    H_STREAM_MEMOP, /* cuStreamWaitValue*, cuStreamWriteValue* (elem: the SC_MEMOP_* kind), cuStreamBatchMemOp (0) */
    H_SET,
    H_SET2D,
    H_HOST_FUNC,
    H_CAPTURE_BEGIN,
    H_CAPTURE_END,
    H_GRAPH_LAUNCH,
    H_GRAPH_INSTANTIATE, /* every cuGraphInstantiate*: (CUgraphExec *phGraphExec, CUgraph hGraph, ...) */
    H_GRAPH_EXEC_UPDATE, /* cuGraphExecUpdate*: (CUgraphExec hGraphExec, CUgraph hGraph, ...) */
    H_POOL_CREATE,
    H_GRAPH_ALLOC,     /* cuGraphAddMemAllocNode */
    H_GRAPH_NODE,      /* cuGraphAddNode: a memory, kernel, copy, set, event or child graph node by its type */
    H_GRAPH_NODE_V2,   /* cuGraphAddNode_v2 (edge data) */
    H_GRAPH_KERNEL_NODE,    /* cuGraphAddKernelNode; elem 1: v1 parameters (no kern), 2: _v2 */
    H_GRAPH_MEMCPY_NODE,    /* cuGraphAddMemcpyNode */
    H_GRAPH_MEMSET_NODE,    /* cuGraphAddMemsetNode */
    H_GRAPH_MEMOP_NODE,     /* cuGraphAddBatchMemOpNode */
    H_GRAPH_CLONE,          /* cuGraphClone */
    H_GRAPH_CHILD,          /* cuGraphAddChildGraphNode */
    H_GRAPH_EVENT_NODE,     /* cuGraphAddEvent{Record,Wait}Node; elem EVNODE_* */
    H_GRAPH_NODE_SET_EVENT, /* cuGraphEvent{Record,Wait}NodeSetEvent */
    H_GRAPH_EXEC_SET_EVENT, /* cuGraphExecEvent{Record,Wait}NodeSetEvent */
    H_GRAPH_NODE_SET_PARAMS, /* cuGraphNodeSetParams: an event node's new event, else FORGET_ALL_GRAPHS */
    H_GRAPH_EXEC_SET_PARAMS, /* cuGraphExecNodeSetParams: the same on an executable graph, else FORGET_EXEC
                                (FORGET_EXEC_CHILD for a child graph node) */
    H_UNLOAD, /* no event: kernel handles may be reused after it (params.c) */
    H_GRAPH_FORGET, /* a graph's or executable graph's work changes; elem says where the handle is */
    H_POOL_EXPORT,    /* cuMemPoolExportToShareableHandle */
    H_POOL_IMPORT,    /* cuMemPoolImportFromShareableHandle */
    H_PTR_EXPORT,     /* cuMemPoolExportPointer */
    H_PTR_IMPORT,     /* cuMemPoolImportPointer */
    H_IPC_EVENT_GET,  /* cuIpcGetEventHandle */
    H_IPC_EVENT_OPEN, /* cuIpcOpenEventHandle */
    H_IPC_MEM_GET,    /* cuIpcGetMemHandle */
    H_IPC_MEM_OPEN,   /* cuIpcOpenMemHandle(_v2) */
    H_IPC_MEM_CLOSE,  /* cuIpcCloseMemHandle */
};

/* H_GRAPH_*EVENT*: which kind of event node. */
enum { EVNODE_RECORD = 1, EVNODE_WAIT };

/* H_GRAPH_FORGET: where the call names the graph whose work changes. */
enum {
    FORGET_EXEC = 1,      /* first parameter, a CUgraphExec */
    FORGET_EXEC_NODE,     /* the same, and the node it changes is the second */
    FORGET_EXEC_CHILD,    /* the same, and the third is the node's new child graph */
    FORGET_EXEC_DESTROY,  /* the same, destroyed */
    FORGET_GRAPH,         /* first parameter, a CUgraph */
    FORGET_NEW_GRAPH,     /* first parameter, a CUgraph * the call fills in */
    FORGET_ALL_MEMOPS,    /* as FORGET_ALL_GRAPHS: a batch memory operation node's new operations (second) */
    FORGET_EXEC_MEMOPS,   /* as FORGET_EXEC: the same on an executable graph (third) */
    FORGET_ALL_GRAPHS,    /* a node's parameters: its graph is not named */
    FORGET_NODE,          /* cuGraphDestroyNode: the same, and the node goes */
};

typedef struct {
    const char *name; /* driver function name without _ptsz/_ptds */
    uint8_t h, async, elem;
} drv_entry;

/* Exact names, versions included: a version suffix can change the layout
 * (cuMemAlloc v1 had 32-bit pointers), so only layouts we know are read. */
static const drv_entry drv_table[] = {
    {"cuStreamCreate", H_STREAM_CREATE, 0, 0},
    {"cuStreamCreateWithPriority", H_STREAM_CREATE_PRIO, 0, 0},
    {"cuStreamDestroy", H_STREAM_DESTROY, 0, 0},
    {"cuStreamDestroy_v2", H_STREAM_DESTROY, 0, 0},
    {"cuEventCreate", H_EVENT_CREATE, 0, 0},
    {"cuEventRecord", H_EVENT_RECORD, 0, 0},
    {"cuEventRecordWithFlags", H_EVENT_RECORD, 0, 1}, /* elem 1: with flags */
    {"cuEventDestroy", H_EVENT_DESTROY, 0, 0},
    {"cuEventDestroy_v2", H_EVENT_DESTROY, 0, 0},
    {"cuStreamWaitEvent", H_STREAM_WAIT, 0, 0},
    {"cuStreamSynchronize", H_STREAM_SYNC, 0, 0},
    {"cuEventSynchronize", H_EVENT_SYNC, 0, 0},
    {"cuCtxSynchronize", H_CTX_SYNC, 0, 0},
    {"cuCtxSynchronize_v2", H_CTX_SYNC, 0, 0},
    {"cuStreamQuery", H_STREAM_QUERY, 0, 0},
    {"cuEventQuery", H_EVENT_QUERY, 0, 0},
    {"cuMemAllocAsync", H_MALLOC_ASYNC, 1, 0},
    {"cuMemAllocFromPoolAsync", H_MALLOC_POOL, 1, 0},
    {"cuMemAlloc_v2", H_MALLOC, 0, 0},
    {"cuMemAllocManaged", H_MALLOC, 0, 0},
    {"cuMemAllocPitch_v2", H_MALLOC_PITCH, 0, 0},
    {"cuMemFreeAsync", H_FREE_ASYNC, 1, 0},
    {"cuMemFree_v2", H_FREE, 0, 0},
    {"cuLaunchKernel", H_LAUNCH, 1, 0},
    {"cuLaunchCooperativeKernel", H_LAUNCH_COOP, 1, 0},
    {"cuLaunchKernelEx", H_LAUNCH_EX, 1, 0},
    {"cuMemcpy", H_CPY_UNIFIED, 0, 0},
    {"cuMemcpyAsync", H_CPY_UNIFIED, 1, 0},
    {"cuMemcpyHtoD_v2", H_CPY_HTOD, 0, 0},
    {"cuMemcpyHtoDAsync_v2", H_CPY_HTOD, 1, 0},
    {"cuMemcpyDtoH_v2", H_CPY_DTOH, 0, 0},
    {"cuMemcpyDtoHAsync_v2", H_CPY_DTOH, 1, 0},
    {"cuMemcpyDtoD_v2", H_CPY_DTOD, 0, 0},
    {"cuMemcpyDtoDAsync_v2", H_CPY_DTOD, 1, 0},
    {"cuMemcpyPeer", H_CPY_PEER, 0, 0},
    {"cuMemcpyPeerAsync", H_CPY_PEER, 1, 0},
    {"cuMemcpy2D_v2", H_CPY_2D, 0, 0},
    {"cuMemcpy2DUnaligned_v2", H_CPY_2D, 0, 0},
    {"cuMemcpy2DAsync_v2", H_CPY_2D, 1, 0},
    {"cuMemcpy3D_v2", H_CPY_3D, 0, 0},
    {"cuMemcpy3DAsync_v2", H_CPY_3D, 1, 0},
    {"cuMemcpy3DPeer", H_CPY_3DPEER, 0, 0},
    {"cuMemcpy3DPeerAsync", H_CPY_3DPEER, 1, 0},
    {"cuStreamWaitValue32", H_STREAM_MEMOP, 1, SC_MEMOP_WAIT32},
    {"cuStreamWaitValue32_v2", H_STREAM_MEMOP, 1, SC_MEMOP_WAIT32},
    {"cuStreamWaitValue64", H_STREAM_MEMOP, 1, SC_MEMOP_WAIT64},
    {"cuStreamWaitValue64_v2", H_STREAM_MEMOP, 1, SC_MEMOP_WAIT64},
    {"cuStreamWriteValue32", H_STREAM_MEMOP, 1, SC_MEMOP_WRITE32},
    {"cuStreamWriteValue32_v2", H_STREAM_MEMOP, 1, SC_MEMOP_WRITE32},
    {"cuStreamWriteValue64", H_STREAM_MEMOP, 1, SC_MEMOP_WRITE64},
    {"cuStreamWriteValue64_v2", H_STREAM_MEMOP, 1, SC_MEMOP_WRITE64},
    {"cuStreamBatchMemOp", H_STREAM_MEMOP, 1, 0},
    {"cuStreamBatchMemOp_v2", H_STREAM_MEMOP, 1, 0},
    {"cuMemcpyBatchAsync", H_CPY_BATCH, 1, 1},
    {"cuMemcpyBatchAsync_v2", H_CPY_BATCH, 1, 2},
    {"cuMemcpyWithAttributesAsync", H_CPY_BATCH, 1, 3},
    {"cuMemcpy3DBatchAsync", H_CPY_3DBATCH, 1, 1},
    {"cuMemcpy3DBatchAsync_v2", H_CPY_3DBATCH, 1, 2},
    {"cuMemcpy3DWithAttributesAsync", H_CPY_3DBATCH, 1, 3},
    {"cuMemsetD8_v2", H_SET, 0, 1},
    {"cuMemsetD16_v2", H_SET, 0, 2},
    {"cuMemsetD32_v2", H_SET, 0, 4},
    {"cuMemsetD8Async", H_SET, 1, 1},
    {"cuMemsetD16Async", H_SET, 1, 2},
    {"cuMemsetD32Async", H_SET, 1, 4},
    {"cuMemsetD2D8_v2", H_SET2D, 0, 1},
    {"cuMemsetD2D16_v2", H_SET2D, 0, 2},
    {"cuMemsetD2D32_v2", H_SET2D, 0, 4},
    {"cuMemsetD2D8Async", H_SET2D, 1, 1},
    {"cuMemsetD2D16Async", H_SET2D, 1, 2},
    {"cuMemsetD2D32Async", H_SET2D, 1, 4},
    {"cuLaunchHostFunc", H_HOST_FUNC, 1, 0},
    {"cuStreamAddCallback", H_HOST_FUNC, 1, 0},
    {"cuStreamBeginCapture", H_CAPTURE_BEGIN, 1, 0},
    {"cuStreamBeginCapture_v2", H_CAPTURE_BEGIN, 1, 0},
    {"cuStreamBeginCaptureToGraph", H_CAPTURE_BEGIN, 1, 1}, /* elem 1: into the graph it names */
    {"cuStreamEndCapture", H_CAPTURE_END, 1, 0},
    {"cuGraphLaunch", H_GRAPH_LAUNCH, 1, 0},
    {"cuGraphInstantiate", H_GRAPH_INSTANTIATE, 0, 0},
    {"cuGraphInstantiate_v2", H_GRAPH_INSTANTIATE, 0, 0},
    {"cuGraphInstantiateWithFlags", H_GRAPH_INSTANTIATE, 0, 0},
    {"cuGraphInstantiateWithParams", H_GRAPH_INSTANTIATE, 0, 0},
    {"cuGraphExecUpdate", H_GRAPH_EXEC_UPDATE, 0, 0},
    {"cuGraphExecUpdate_v2", H_GRAPH_EXEC_UPDATE, 0, 0},
    {"cuMemPoolCreate", H_POOL_CREATE, 0, 0},
    {"cuGraphAddMemAllocNode", H_GRAPH_ALLOC, 0, 0},
    {"cuGraphAddNode", H_GRAPH_NODE, 0, 0},
    {"cuGraphAddNode_v2", H_GRAPH_NODE_V2, 0, 0},
    {"cuGraphCreate", H_GRAPH_FORGET, 0, FORGET_NEW_GRAPH},
    {"cuGraphClone", H_GRAPH_CLONE, 0, 0},
    {"cuGraphDestroy", H_GRAPH_FORGET, 0, FORGET_GRAPH},
    {"cuGraphExecDestroy", H_GRAPH_FORGET, 0, FORGET_EXEC_DESTROY},
    {"cuGraphExecKernelNodeSetParams", H_GRAPH_FORGET, 0, FORGET_EXEC},
    {"cuGraphExecKernelNodeSetParams_v2", H_GRAPH_FORGET, 0, FORGET_EXEC},
    {"cuGraphExecMemcpyNodeSetParams", H_GRAPH_FORGET, 0, FORGET_EXEC},
    {"cuGraphExecMemsetNodeSetParams", H_GRAPH_FORGET, 0, FORGET_EXEC},
    {"cuGraphExecChildGraphNodeSetParams", H_GRAPH_FORGET, 0, FORGET_EXEC_CHILD},
    {"cuGraphExecBatchMemOpNodeSetParams", H_GRAPH_FORGET, 0, FORGET_EXEC_MEMOPS},
    {"cuGraphExecNodeSetParams", H_GRAPH_EXEC_SET_PARAMS, 0, 0},
    {"cuGraphNodeSetEnabled", H_GRAPH_FORGET, 0, FORGET_EXEC_NODE},
    {"cuGraphAddKernelNode", H_GRAPH_KERNEL_NODE, 0, 1},
    {"cuGraphAddKernelNode_v2", H_GRAPH_KERNEL_NODE, 0, 2},
    {"cuGraphAddMemcpyNode", H_GRAPH_MEMCPY_NODE, 0, 0},
    {"cuGraphAddMemsetNode", H_GRAPH_MEMSET_NODE, 0, 0},
    {"cuGraphAddChildGraphNode", H_GRAPH_CHILD, 0, 0},
    {"cuGraphAddBatchMemOpNode", H_GRAPH_MEMOP_NODE, 0, 0},
    {"cuGraphKernelNodeSetParams", H_GRAPH_FORGET, 0, FORGET_ALL_GRAPHS},
    {"cuGraphKernelNodeSetParams_v2", H_GRAPH_FORGET, 0, FORGET_ALL_GRAPHS},
    {"cuGraphMemcpyNodeSetParams", H_GRAPH_FORGET, 0, FORGET_ALL_GRAPHS},
    {"cuGraphMemsetNodeSetParams", H_GRAPH_FORGET, 0, FORGET_ALL_GRAPHS},
    {"cuGraphBatchMemOpNodeSetParams", H_GRAPH_FORGET, 0, FORGET_ALL_MEMOPS},
    {"cuGraphNodeSetParams", H_GRAPH_NODE_SET_PARAMS, 0, 0},
    {"cuGraphAddEventRecordNode", H_GRAPH_EVENT_NODE, 0, EVNODE_RECORD},
    {"cuGraphAddEventWaitNode", H_GRAPH_EVENT_NODE, 0, EVNODE_WAIT},
    {"cuGraphEventRecordNodeSetEvent", H_GRAPH_NODE_SET_EVENT, 0, EVNODE_RECORD},
    {"cuGraphEventWaitNodeSetEvent", H_GRAPH_NODE_SET_EVENT, 0, EVNODE_WAIT},
    {"cuGraphExecEventRecordNodeSetEvent", H_GRAPH_EXEC_SET_EVENT, 0, EVNODE_RECORD},
    {"cuGraphExecEventWaitNodeSetEvent", H_GRAPH_EXEC_SET_EVENT, 0, EVNODE_WAIT},
    {"cuGraphDestroyNode", H_GRAPH_FORGET, 0, FORGET_NODE},
    {"cuMemPoolExportToShareableHandle", H_POOL_EXPORT, 0, 0},
    {"cuMemPoolImportFromShareableHandle", H_POOL_IMPORT, 0, 0},
    {"cuMemPoolExportPointer", H_PTR_EXPORT, 0, 0},
    {"cuMemPoolImportPointer", H_PTR_IMPORT, 0, 0},
    {"cuIpcGetEventHandle", H_IPC_EVENT_GET, 0, 0},
    {"cuIpcOpenEventHandle", H_IPC_EVENT_OPEN, 0, 0},
    {"cuIpcGetMemHandle", H_IPC_MEM_GET, 0, 0},
    {"cuIpcOpenMemHandle", H_IPC_MEM_OPEN, 0, 0},
    {"cuIpcOpenMemHandle_v2", H_IPC_MEM_OPEN, 0, 0},
    {"cuIpcCloseMemHandle", H_IPC_MEM_CLOSE, 0, 0},
    {"cuModuleUnload", H_UNLOAD, 0, 0},
    {"cuLibraryUnload", H_UNLOAD, 0, 0},
    {"cuCtxDestroy", H_UNLOAD, 0, 0},
    {"cuCtxDestroy_v2", H_UNLOAD, 0, 0},
    {"cuDevicePrimaryCtxReset", H_UNLOAD, 0, 0},
    {"cuDevicePrimaryCtxReset_v2", H_UNLOAD, 0, 0},
    {"cuDevicePrimaryCtxRelease", H_UNLOAD, 0, 0},
    {"cuDevicePrimaryCtxRelease_v2", H_UNLOAD, 0, 0},
};

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
    "cudaIpcOpenMemHandle", "cudaIpcCloseMemHandle",
};
static const char *rt_prefix[] = {"cudaMemcpy", "cudaMemset", "cudaEvent"};

typedef struct {
    uint8_t h, async, elem, pt;
    uint8_t release; /* SC_REL_*: a free or destroy, announced at its entry (releases.c) */
} drv_info;

static uint8_t release_kind(uint8_t h) {
    switch (h) {
    case H_FREE: case H_FREE_ASYNC: case H_IPC_MEM_CLOSE: return SC_REL_MEMORY;
    case H_STREAM_DESTROY: return SC_REL_STREAM;
    case H_EVENT_DESTROY: return SC_REL_EVENT;
    }
    return 0;
}

static drv_info drv[MAXCB];
static char *drv_disp[MAXCB], *rt_disp[MAXCB];
static _Atomic uint32_t drv_sid[MAXCB], rt_sid[MAXCB];
_Atomic int sc_active;
int sc_stats;
int sc_callback_only;
_Atomic uint64_t sc_stat_handler_time, sc_stat_handled, sc_stat_stack_hits, sc_stat_stack_unwinds;
_Atomic uint64_t sc_stat_unwound_frames, sc_stat_unwind_time;
_Atomic uint64_t sc_stat_launches, sc_stat_scan_words, sc_stat_scan_time;
_Atomic uint64_t sc_stat_phase_time[SC_NPHASES];

/* Stats time with the TSC where there is one: clock_gettime cost about 80 ns
 * on the GPU machine, more than some of the phases it would time. The units
 * become nanoseconds at exit, with a rate measured from sc_stat_begin. */
static int64_t stat_clock0, stat_ns0;

int64_t sc_stat_clock(void) {
#if defined(__x86_64__)
    return (int64_t)__rdtsc();
#else
    return sc_now_ns();
#endif
}

void sc_stat_begin(void) {
    stat_clock0 = sc_stat_clock();
    stat_ns0 = sc_now_ns();
}

double sc_stat_ns_per_unit(void) {
    int64_t units = sc_stat_clock() - stat_clock0, ns = sc_now_ns() - stat_ns0;
    return units > 0 && ns > 0 ? (double)ns / (double)units : 1.0;
}

/* With STREAMCHECK_STATS=1, time each phase of a handled call. */
static inline void phase_done(int phase, int64_t *t) {
    if (!sc_stats) return;
    int64_t now = sc_stat_clock();
    atomic_fetch_add_explicit(&sc_stat_phase_time[phase], (uint64_t)(now - *t), memory_order_relaxed);
    *t = now;
}

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
        for (size_t i = 0; i < sizeof drv_table / sizeof drv_table[0]; i++) {
            if (strcmp(base, drv_table[i].name) != 0) continue;
            drv[cbid] = (drv_info){drv_table[i].h, drv_table[i].async, drv_table[i].elem, (uint8_t)pt,
                                   release_kind(drv_table[i].h)};
            drv_disp[cbid] = strdup(sc_display_name(name, disp, sizeof disp));
            if (enable(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, cbid) == CUPTI_SUCCESS)
                ndrv++;
            else
                drv[cbid].h = H_NONE;
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
        rt_disp[cbid] = strdup(disp);
        if (enable(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, cbid) == CUPTI_SUCCESS) nrt++;
    }
    if (ndrv == 0) {
        atomic_store(&sc_active, 0);
        snprintf(err, errlen, "no driver API callback could be enabled (%d runtime)", nrt);
        return 0;
    }
    return 1;
}

/* ---- per-thread state ---- */

static pthread_key_t tkey;
static int tkey_ok; /* the key exists: without one, thread state is never freed */
static pthread_once_t tkey_once = PTHREAD_ONCE_INIT;
/* initial-exec: a plain load from the thread pointer, not a __tls_get_addr
 * call per callback. A dlopened library may use a little static TLS (glibc
 * sets a surplus aside for it), and this is one pointer. */
static __thread sc_tstate *tls __attribute__((tls_model("initial-exec")));

static void tstate_free(void *p) {
    tls = NULL; /* a later callback in this exiting thread starts afresh */
    sc_release_forget(p);
    sc_stack_cache_free(p);
    sc_python_lines_free(p);
    free(p);
}
static void tkey_init(void) { tkey_ok = pthread_key_create(&tkey, tstate_free) == 0; }

SC_HOT sc_tstate *sc_tls(void) {
    sc_tstate *ts = tls;
    uint32_t gen = atomic_load_explicit(&sc_fork_gen, memory_order_relaxed);
    if (!ts) {
        pthread_once(&tkey_once, tkey_init);
        ts = calloc(1, sizeof *ts);
        if (!ts) return NULL;
        tls = ts;
        if (tkey_ok) pthread_setspecific(tkey, ts);
        ts->tid = (uint32_t)syscall(SYS_gettid);
        ts->fork_gen = gen;
    } else if (ts->fork_gen != gen) {
        ts->tid = (uint32_t)syscall(SYS_gettid); /* we are a forked child now */
        ts->fork_gen = gen;
        ts->ctx_valid = 0;
    }
    return ts;
}

/* ---- helpers ---- */

SC_HOT static uint64_t norm_stream(CUstream s, int pt) {
    uintptr_t v = (uintptr_t)s;
    if (v == 0) return pt ? 2 : 0; /* _ptsz/_ptds: 0 is the thread's per-thread stream */
    if (v == SC_STREAM_LEGACY) return 0;
    return v;
}

SC_HOT static int32_t device_of(sc_tstate *ts, CUcontext ctx) {
    if (!ctx) return -1;
    if (ts->ctx_valid && ts->ctx == ctx) return ts->ctx_dev;
    CUdevice d = -1;
    if (!sc_drv.cuCtxGetDevice || sc_drv.cuCtxGetDevice(&d) != CUDA_SUCCESS) d = -1;
    ts->ctx = ctx;
    ts->ctx_dev = d;
    ts->ctx_valid = 1;
    return d;
}

/* The device whose memory p is, or fallback if the driver cannot say. */
static int32_t device_of_ptr(uint64_t p, int32_t fallback) {
    int d = -1;
    if (!sc_drv.cuPointerGetAttribute ||
        sc_drv.cuPointerGetAttribute(&d, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)(uintptr_t)p) != CUDA_SUCCESS)
        return fallback;
    return d;
}

/* Host-side flags of a host pointer: pinned if the driver knows it as host
 * memory, pageable if it does not know it at all. */
static uint32_t host_flags(const void *p) {
    unsigned int mt = 0;
    if (!sc_drv.cuPointerGetAttribute) return 0;
    if (sc_drv.cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)p) != CUDA_SUCCESS)
        return FLAG_PAGEABLE;
    return mt == CU_MEMORYTYPE_HOST ? FLAG_PINNED : 0;
}

/* Side of a unified-address pointer: 1 device, 0 host (flags set), -1 unknown. */
static int classify(uint64_t p, uint32_t *flags) {
    if (sc_alloc_contains(p)) return 1;
    unsigned int mt = 0;
    if (!sc_drv.cuPointerGetAttribute) return -1;
    if (sc_drv.cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) != CUDA_SUCCESS) {
        *flags |= FLAG_PAGEABLE;
        return 0;
    }
    if (mt == CU_MEMORYTYPE_DEVICE || mt == CU_MEMORYTYPE_ARRAY) return 1;
    if (mt == CU_MEMORYTYPE_HOST) {
        *flags |= FLAG_PINNED;
        return 0;
    }
    return -1;
}

static uint32_t kind_of(int dst_dev, int src_dev) {
    if (dst_dev < 0 || src_dev < 0) return COPY_DEFAULT;
    if (dst_dev && src_dev) return COPY_D2D;
    if (dst_dev) return COPY_H2D;
    if (src_dev) return COPY_D2H;
    return COPY_H2H;
}

/* One side of a 2D/3D copy: start address, device-ness, flags. */
static uint64_t side(unsigned int mtype, const void *host, CUdeviceptr dev, uint64_t off, int *is_dev,
                     uint32_t *flags) {
    switch (mtype) {
    case CU_MEMORYTYPE_HOST:
        *is_dev = 0;
        *flags |= host_flags(host);
        return (uint64_t)(uintptr_t)host + off;
    case CU_MEMORYTYPE_DEVICE:
        *is_dev = 1;
        return dev + off;
    case CU_MEMORYTYPE_UNIFIED:
        *is_dev = classify(dev, flags);
        return dev + off;
    default: /* CUDA array: no linear address */
        *is_dev = 1;
        return 0;
    }
}

/* Bytes from the first to the last byte a pitched copy touches. */
static uint64_t span(uint64_t pitch, uint64_t rows_per_slice, uint64_t width, uint64_t height, uint64_t depth) {
    if (width == 0 || height == 0 || depth == 0) return 0;
    if (pitch < width) pitch = width;
    if (rows_per_slice < height) rows_per_slice = height;
    return pitch * rows_per_slice * (depth - 1) + pitch * (height - 1) + width;
}

/* ---- the callback ---- */

/* READ_COPY3D fills an event from a CUDA_MEMCPY3D or CUDA_MEMCPY3D_PEER
 * descriptor c: the two name their fields alike but lay them out apart, so
 * a macro reads either. The size is the byte span from the first to the last
 * byte touched on either side. */
#define READ_COPY3D(c, ev)                                                                      \
    do {                                                                                        \
        int dd_, sd_;                                                                           \
        uint64_t dh_ = (c)->dstHeight ? (c)->dstHeight : (c)->Height;                            \
        uint64_t sh_ = (c)->srcHeight ? (c)->srcHeight : (c)->Height;                            \
        (ev)->ptr = side((c)->dstMemoryType, (c)->dstHost, (c)->dstDevice,                       \
                         ((c)->dstZ * dh_ + (c)->dstY) * (c)->dstPitch + (c)->dstXInBytes, &dd_, \
                         &(ev)->flags);                                                         \
        (ev)->src = side((c)->srcMemoryType, (c)->srcHost, (c)->srcDevice,                       \
                         ((c)->srcZ * sh_ + (c)->srcY) * (c)->srcPitch + (c)->srcXInBytes, &sd_, \
                         &(ev)->flags);                                                         \
        uint64_t a_ = span((c)->dstPitch, dh_, (c)->WidthInBytes, (c)->Height, (c)->Depth);      \
        uint64_t b_ = span((c)->srcPitch, sh_, (c)->WidthInBytes, (c)->Height, (c)->Depth);      \
        (ev)->size = a_ > b_ ? a_ : b_;                                                         \
        (ev)->kind = kind_of(dd_, sd_);                                                         \
    } while (0)

/* Zeroes e with plain 16-byte stores: GCC compiles a memset of this size
 * (and a loop of stores) into "rep stos", whose start-up cost was the
 * largest single cost of a recorded call in the fake app's loop. */
static inline void event_clear(sc_event *e) {
    typedef uint64_t u64x2 __attribute__((vector_size(16), may_alias, aligned(8)));
    _Static_assert(sizeof(sc_event) == 160, "event_clear covers every byte of sc_event");
    u64x2 *v = (u64x2 *)e, z = {0, 0};
    v[0] = z, v[1] = z, v[2] = z, v[3] = z, v[4] = z, v[5] = z, v[6] = z, v[7] = z, v[8] = z, v[9] = z;
}

/* Graphs of the event nodes the program added, by node handle: a node
 * given a new event (cuGraphEventRecordNodeSetEvent) names no graph, and
 * CUDA 13.0's driver cannot say which holds it. A destroyed node's entry
 * goes (cuGraphDestroyNode); one left by a destroyed graph can credit a
 * reused handle's new event to that graph, whose launches the analyzer
 * then takes to make the record or not (it cannot find the node there):
 * that can hide a race, never make one up. */
static lfmap event_node_graphs;

static void remember_event_node(CUgraphNode *ph, CUgraph g) {
    uint64_t node = ph ? (uint64_t)(uintptr_t)*ph : 0;
    if (!node || !g) return;
    sc_lock_acquire();
    lfmap_put_locked(&event_node_graphs, node, (uint64_t)(uintptr_t)g);
    sc_lock_release();
}

static void forget_event_node(CUgraphNode node) {
    uint64_t v;
    if (!node || !lfmap_get(&event_node_graphs, (uint64_t)(uintptr_t)node, &v)) return;
    sc_lock_acquire();
    lfmap_del_locked(&event_node_graphs, (uint64_t)(uintptr_t)node);
    sc_lock_release();
}

/* The graph that holds node: as the driver says (CUDA 13.1 and later), else
 * as the program added it; 0 if neither knows (a node made by a capture). */
static uint64_t graph_of_node(CUgraphNode node) {
    CUgraph g = NULL;
    if (!node) return 0; /* 0 is no key of the map's */
    if (sc_drv.cuGraphNodeGetContainingGraph && sc_drv.cuGraphNodeGetContainingGraph(node, &g) == CUDA_SUCCESS && g)
        return (uint64_t)(uintptr_t)g;
    uint64_t v;
    return lfmap_get(&event_node_graphs, (uint64_t)(uintptr_t)node, &v) ? v : 0;
}

/* Makes ev event record (or wait) node `node`, of event e, in graph or
 * exec. */
static void set_event_node(sc_event *ev, int record, CUevent e, uint64_t graph, uint64_t exec, uint64_t node) {
    ev->op = record ? OP_GRAPH_EVENT_RECORD_NODE : OP_GRAPH_EVENT_WAIT_NODE;
    ev->event = (uint64_t)(uintptr_t)e;
    ev->graph = graph;
    ev->exec = exec;
    ev->node = node;
}

/* The type of the node that CUgraphNodeParams np describes, and where that
 * type's own parameters start (the union after the type). */
static const unsigned char *node_params(const unsigned char *np, int *type) {
    memcpy(type, np, sizeof *type);
    return np + SC_GRAPH_NODE_PARAMS_UNION;
}

/* A child graph node's graph: CUDA_CHILD_GRAPH_NODE_PARAMS starts with it. */
static uint64_t child_graph_of(const unsigned char *own) {
    CUgraph g;
    memcpy(&g, own, sizeof g);
    return (uint64_t)(uintptr_t)g;
}

/* Makes ev the event node that a node of the given type with parameters
 * own (node_params) describes: node, in graph or exec, added (ev->flags
 * has FLAG_LIFETIME) or given this event; 0 if it is no event node. */
static int event_node(sc_event *ev, int type, const unsigned char *own, uint64_t graph, uint64_t exec, uint64_t node) {
    if (type != SC_GRAPH_NODE_TYPE_EVENT_RECORD && type != SC_GRAPH_NODE_TYPE_WAIT_EVENT) return 0;
    CUevent e;
    memcpy(&e, own, sizeof e); /* CUDA_EVENT_{RECORD,WAIT}_NODE_PARAMS: the event alone */
    set_event_node(ev, type == SC_GRAPH_NODE_TYPE_EVENT_RECORD, e, graph, exec, node);
    return 1;
}

/* The graph a capture on stream (a normalized handle) is building, 0 if
 * the driver does not say: nodes a program adds to it by hand
 * (cuStreamGetCaptureInfo, then cuGraphAddNode) are part of the capture. */
static uint64_t capturing_graph(uint64_t stream) {
    CUstream s = (CUstream)(uintptr_t)stream;
    int status = 0;
    CUgraph g = NULL;
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    if (sc_drv.cuStreamGetCaptureInfo_v3)
        r = sc_drv.cuStreamGetCaptureInfo_v3(s, &status, NULL, &g, NULL, NULL, NULL);
    else if (sc_drv.cuStreamGetCaptureInfo_v2)
        r = sc_drv.cuStreamGetCaptureInfo_v2(s, &status, NULL, &g, NULL, NULL);
    return r == CUDA_SUCCESS && status == 1 /* CU_STREAM_CAPTURE_STATUS_ACTIVE */ ? (uint64_t)(uintptr_t)g : 0;
}

/* Makes ev a copy of size bytes from src to dst, with unified addressing:
 * the driver says which sides are device memory (cuMemcpy, a batch's). */
static void unified_copy(sc_event *ev, uint64_t dst, uint64_t src, uint64_t size) {
    ev->ptr = dst;
    ev->src = src;
    ev->size = size;
    int d = classify(dst, &ev->flags), s = classify(src, &ev->flags);
    ev->kind = kind_of(d, s);
}

/* Makes ev copy i of batch b: its sides and size, classified as a
 * cuMemcpyAsync's. A source read during the call
 * (CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL) is done when the call
 * returns, before any later work: it is left out, not made a use in stream
 * order that later frees would race. */
static void batch_copy(sc_event *ev, const sc_batch *b, size_t i) {
    ev->flags = 0;
    unified_copy(ev, b->dsts[i], b->srcs[i], b->sizes[i]);
    int order = 0; /* attrs[k] applies to copies attrsIdxs[k] .. attrsIdxs[k+1]-1 */
    for (size_t k = 0; b->attrs && b->attrsIdxs && k < b->numAttrs && b->attrsIdxs[k] <= i; k++)
        order = b->attrs[k].srcAccessOrder;
    if (order == SC_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL) {
        ev->src = 0;
        ev->flags = 0; /* the host side left is the destination's alone */
        classify(ev->ptr, &ev->flags);
    }
}

/* One side of a 3D batch copy: a pointer's address and device-ness, or a
 * CUDA array's (device memory with no address); the bytes it spans. */
static uint64_t operand3d(const sc_memcpy3d_operand *o, const sc_memcpy3d_op *op, int *is_dev, uint32_t *flags,
                          uint64_t *bytes) {
    if (o->type != SC_MEMCPY_OPERAND_POINTER) {
        *is_dev = 1;
        return 0;
    }
    *is_dev = classify(o->op.ptr.ptr, flags);
    *bytes = span(o->op.ptr.rowLength, o->op.ptr.layerHeight, op->width, op->height, op->depth);
    return o->op.ptr.ptr;
}

/* Makes ev a copy of a cuMemcpy3DBatchAsync. A source read during the call
 * is left out, as batch_copy does. */
static void batch_copy3d(sc_event *ev, const sc_memcpy3d_op *op) {
    int d, s;
    uint64_t db = 0, sb = 0;
    uint32_t src_flags = 0;
    ev->flags = 0;
    ev->ptr = operand3d(&op->dst, op, &d, &ev->flags, &db);
    ev->src = operand3d(&op->src, op, &s, &src_flags, &sb);
    ev->size = db > sb ? db : sb;
    ev->kind = kind_of(d, s);
    if (op->srcAccessOrder == SC_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL)
        ev->src = 0; /* and its host side is not the copy's */
    else
        ev->flags |= src_flags;
}

/* Makes ev operation i of a cuStreamBatchMemOp: a wait or write names an
 * address, a value (a 32-bit one's in the low half of the union) and
 * flags; a flush or barrier only flags. */
static void batch_memop(sc_event *ev, const sc_memop_params *ops, unsigned i) {
    const sc_memop_params *o = &ops[i];
    ev->memop = o->operation;
    ev->ptr = ev->value = 0;
    switch (o->operation) {
    case SC_MEMOP_WAIT32:
    case SC_MEMOP_WRITE32:
        ev->ptr = o->address;
        ev->value = (uint32_t)o->value64;
        ev->mem_flags = o->flags;
        break;
    case SC_MEMOP_WAIT64:
    case SC_MEMOP_WRITE64:
        ev->ptr = o->address;
        ev->value = o->value64;
        ev->mem_flags = o->flags;
        break;
    case SC_MEMOP_FLUSH:
    case SC_MEMOP_BARRIER:
        ev->mem_flags = ((const sc_memop_flags_only *)o)->flags;
        break;
    case SC_MEMOP_ATOMIC: { /* its data type's width is not decoded: mem_flags 0 */
        const sc_memop_atomic *a = (const sc_memop_atomic *)o;
        ev->ptr = a->address;
        ev->value = a->value;
        ev->mem_flags = 0;
        break;
    }
    default: /* unknown to this shim: the type goes in value, and the analyzer warns */
        ev->memop = 0;
        ev->value = o->operation;
        ev->mem_flags = 0;
    }
}

/* Takes a batch memory operation node's operations into *ops and *n;
 * 0 if it names none. */
static int node_memops(const sc_memop_node_params *np, const sc_memop_params **ops, unsigned *n) {
    if (!np || !np->paramArray || np->count == 0) return 0;
    *ops = np->paramArray;
    *n = np->count;
    return 1;
}

/* Makes ev the first operation of a batch memory operation node added to
 * graph (cuGraphAddBatchMemOpNode, cuGraphAddNode of that type): each is
 * a stream memory operation of the graph's launches (FLAG_GRAPH_NODE);
 * *ops and *n take the batch, for the others. 0 if it names none. */
static int memop_node(sc_event *ev, const sc_memop_node_params *np, CUgraph graph, const sc_memop_params **ops,
                      unsigned *n) {
    if (!node_memops(np, ops, n)) return 0;
    ev->op = OP_STREAM_MEMOP;
    ev->flags |= FLAG_GRAPH_NODE;
    ev->graph = (uint64_t)(uintptr_t)graph;
    batch_memop(ev, *ops, 0);
    return 1;
}

/* The kernel's name, for a node that CUPTI gives no symbol name. */
static const char *kernel_name(CUfunction f) {
    const char *name = NULL;
    if (sc_drv.cuFuncGetName && sc_drv.cuFuncGetName(&name, f) == CUDA_SUCCESS && name) return name;
    name = NULL;
    if (sc_drv.cuKernelGetName && sc_drv.cuKernelGetName(&name, (CUkernel)f) == CUDA_SUCCESS && name) return name;
    return NULL;
}

/* Makes ev the kernel, copy or set node that the parameters np of a node of
 * the given type describe (has_kern: a kernel's parameters go on to kern),
 * added to graph; 0 if it is none of those. */
static int work_node(sc_tstate *ts, sc_event *ev, int type, const unsigned char *np, int has_kern, CUgraph graph) {
    if (!np) return 0;
    switch (type) {
    case SC_GRAPH_NODE_TYPE_KERNEL: {
        const sc_kernel_node_params *k = (const sc_kernel_node_params *)np;
        CUfunction f = k->func;
        if (!f && has_kern) f = (CUfunction)k->kern;
        ev->op = OP_LAUNCH;
        ev->nptrs = sc_launch_scan(ts, f, f ? kernel_name(f) : NULL, k->kernelParams, k->extra, &ev->kernel, &ev->nweak);
        break;
    }
    case SC_GRAPH_NODE_TYPE_MEMCPY:
        ev->op = OP_MEMCPY_ASYNC;
        READ_COPY3D((const sc_CUDA_MEMCPY3D *)np, ev);
        break;
    case SC_GRAPH_NODE_TYPE_MEMSET: {
        const sc_memset_node_params *m = (const sc_memset_node_params *)np;
        ev->op = OP_MEMSET_ASYNC;
        ev->ptr = m->dst;
        ev->size = span(m->pitch, m->height, (uint64_t)m->width * m->elementSize, m->height, 1);
        break;
    }
    default:
        return 0;
    }
    ev->flags |= FLAG_GRAPH_NODE;
    ev->graph = (uint64_t)(uintptr_t)graph;
    return 1;
}

/* The key of 64 bytes of interprocess data (export data, an event or
 * memory handle): their 64-bit FNV-1a hash, the same in the process that
 * made them and in the one that imports them. 0 if there are none. */
static uint64_t ipc_key(const sc_ipc_data *d) {
    if (!d) return 0;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < sizeof d->reserved; i++) h = (h ^ d->reserved[i]) * 0x100000001b3ull;
    return h;
}

/* The size of the allocation that holds p, as the driver says; 0 if it
 * cannot. */
static uint64_t range_size(CUdeviceptr p) {
    size_t n = 0;
    if (!sc_drv.cuPointerGetAttribute || sc_drv.cuPointerGetAttribute(&n, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p) != CUDA_SUCCESS)
        return 0;
    return n;
}

/* What a call brings beside its first event: the other events handle_driver
 * writes after it (emit_more). */
typedef struct {
    sc_batch batch;                /* a batch of copies */
    const sc_memop_params *memops; /* a cuStreamBatchMemOp's operations, or a node's */
    unsigned nmemops;
    int memops_after;              /* memops are a batch memory operation node's new ones, each an event after ev */
    const sc_memcpy3d_op *ops3d;   /* a cuMemcpy3DBatchAsync's copies */
    size_t nops3d;
    CUgraph *bodies;               /* a conditional node's body graphs */
    unsigned nbodies;
} more_events;

/* Decodes the calls that are not on a program's per-call path (creation,
 * graphs, batches, 2D and 3D copies): kept out of handle_driver, whose code
 * must stay small, since each call finds it out of the CPU's caches. Returns
 * 0 to record nothing, 1 for one event, 2 when *m holds more. */
SC_COLD static int decode_rare(sc_tstate *ts, drv_info in, const void *pp, int ok, sc_event *ev, int64_t *alloc_add,
                               more_events *m) {
    int pt = in.pt;
    memset(m, 0, sizeof *m);
    switch (in.h) {
    case H_STREAM_CREATE: {
        const p_cuStreamCreate *p = pp;
        ev->op = OP_STREAM_CREATE;
        if (ok && p->phStream) ev->stream = (uint64_t)(uintptr_t)*p->phStream;
        if (p->Flags & CU_STREAM_NON_BLOCKING) ev->flags |= FLAG_NON_BLOCKING;
        break;
    }
    case H_STREAM_CREATE_PRIO: {
        const p_cuStreamCreateWithPriority *p = pp;
        ev->op = OP_STREAM_CREATE;
        if (ok && p->phStream) ev->stream = (uint64_t)(uintptr_t)*p->phStream;
        if (p->flags & CU_STREAM_NON_BLOCKING) ev->flags |= FLAG_NON_BLOCKING;
        ev->prio = p->priority;
        break;
    }
    case H_STREAM_DESTROY:
        ev->op = OP_STREAM_DESTROY;
        ev->stream = norm_stream(((const p_stream_first *)pp)->hStream, pt);
        break;
    case H_CAPTURE_BEGIN:
        ev->op = OP_CAPTURE_BEGIN;
        ev->stream = norm_stream(((const p_stream_first *)pp)->hStream, pt);
        if (in.elem == 1) {
            ev->graph = (uint64_t)(uintptr_t)((const p_first_two *)pp)->second;
        } else if (ok && (ev->graph = capturing_graph(ev->stream))) {
            ev->flags |= FLAG_LIFETIME; /* the new graph the capture builds */
        }
        break;
    case H_CAPTURE_END: {
        const p_cuStreamEndCapture *p = pp;
        ev->op = OP_CAPTURE_END;
        ev->stream = norm_stream(p->hStream, pt);
        if (ok && p->phGraph) ev->graph = (uint64_t)(uintptr_t)*p->phGraph;
        break;
    }
    case H_GRAPH_INSTANTIATE: {
        const p_graph_instantiate *p = pp;
        ev->op = OP_GRAPH_INSTANTIATE;
        ev->flags |= FLAG_LIFETIME; /* a new executable graph */
        ev->graph = (uint64_t)(uintptr_t)p->hGraph;
        if (ok && p->phGraphExec) ev->exec = (uint64_t)(uintptr_t)*p->phGraphExec;
        break;
    }
    case H_GRAPH_EXEC_UPDATE: {
        const p_graph_exec_update *p = pp;
        ev->op = OP_GRAPH_INSTANTIATE;
        ev->graph = (uint64_t)(uintptr_t)p->hGraph;
        ev->exec = (uint64_t)(uintptr_t)p->hGraphExec;
        break;
    }
    case H_EVENT_CREATE: {
        const p_cuEventCreate *p = pp;
        ev->op = OP_EVENT_CREATE;
        if (ok && p->phEvent) ev->event = (uint64_t)(uintptr_t) * (CUevent *)p->phEvent;
        break;
    }
    case H_EVENT_DESTROY:
        ev->op = OP_EVENT_DESTROY;
        ev->event = (uint64_t)(uintptr_t)((const p_event_first *)pp)->hEvent;
        break;
    case H_MALLOC: {
        const p_cuMemAlloc *p = pp;
        ev->op = OP_MALLOC;
        ev->size = p->bytesize;
        if (ok && p->dptr) *alloc_add = (int64_t)(ev->ptr = *p->dptr);
        break;
    }
    case H_MALLOC_PITCH: {
        const p_cuMemAllocPitch *p = pp;
        ev->op = OP_MALLOC;
        ev->size = (uint64_t)p->WidthInBytes * p->Height;
        if (ok && p->pPitch) ev->size = (uint64_t)*p->pPitch * p->Height;
        if (ok && p->dptr) *alloc_add = (int64_t)(ev->ptr = *p->dptr);
        break;
    }
    case H_CPY_PEER: {
        const p_cuMemcpyPeer *p = pp;
        ev->ptr = p->dstDevice;
        ev->src = p->srcDevice;
        ev->size = p->ByteCount;
        ev->kind = COPY_D2D;
        if (in.async) ev->stream = norm_stream(p->hStream, pt);
        break;
    }
    case H_CPY_2D: {
        const p_cuMemcpy2D *p = pp;
        const sc_CUDA_MEMCPY2D *c = p->pCopy;
        if (!c) break;
        int dd, sd;
        ev->ptr = side(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstY * c->dstPitch + c->dstXInBytes, &dd, &ev->flags);
        ev->src = side(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcY * c->srcPitch + c->srcXInBytes, &sd, &ev->flags);
        uint64_t a = span(c->dstPitch, c->Height, c->WidthInBytes, c->Height, 1);
        uint64_t b = span(c->srcPitch, c->Height, c->WidthInBytes, c->Height, 1);
        ev->size = a > b ? a : b;
        ev->kind = kind_of(dd, sd);
        if (in.async) ev->stream = norm_stream(p->hStream, pt);
        break;
    }
    case H_CPY_3D: {
        const p_cuMemcpy3D *p = pp;
        if (!p->pCopy) break;
        READ_COPY3D(p->pCopy, ev);
        if (in.async) ev->stream = norm_stream(p->hStream, pt);
        break;
    }
    case H_STREAM_MEMOP: {
        /* A wait for a value, or a write of one, at an address; a m->batch
         * is one event an operation (below). A failed m->batch ran none:
         * its operations are not read. */
        ev->op = OP_STREAM_MEMOP;
        if (in.elem != 0) {
            const p_stream_memop *p = pp;
            ev->stream = norm_stream(p->stream, pt);
            ev->ptr = p->addr;
            ev->memop = in.elem;
            if (in.elem == SC_MEMOP_WAIT32 || in.elem == SC_MEMOP_WRITE32) {
                ev->value = ((const p_stream_memop32 *)pp)->value;
                ev->mem_flags = ((const p_stream_memop32 *)pp)->flags;
            } else {
                ev->value = ((const p_stream_memop64 *)pp)->value;
                ev->mem_flags = ((const p_stream_memop64 *)pp)->flags;
            }
            break;
        }
        const p_cuStreamBatchMemOp *p = pp;
        ev->stream = norm_stream(p->stream, pt);
        if (ok && (!p->paramArray || p->count == 0)) return 0; /* an empty m->batch did nothing */
        if (ok) {
            m->memops = p->paramArray;
            m->nmemops = p->count;
            batch_memop(ev, m->memops, 0);
        }
        break;
    }
    case H_CPY_BATCH: {
        /* One event a copy, all on the m->batch's stream; this one is the
         * first, the others are written after it (below). A failed call
         * copied nothing, and its count need not fit its arrays. */
        if (!ok) return 0;
        if (in.elem == 3) { /* one copy with attributes: a m->batch of one */
            const p_cuMemcpyWithAttributesAsync *p = pp;
            static const size_t first = 0;
            m->batch = (sc_batch){&p->dst, &p->src, &p->size, 1, p->attr, p->attr ? &first : NULL, p->attr ? 1 : 0};
            ev->stream = norm_stream(p->hStream, pt);
        } else {
            m->batch = ((const p_cuMemcpyBatchAsync_v2 *)pp)->batch; /* both versions start so */
            ev->stream = norm_stream(in.elem == 1 ? ((const p_cuMemcpyBatchAsync *)pp)->hStream
                                                 : ((const p_cuMemcpyBatchAsync_v2 *)pp)->hStream,
                                    pt);
        }
        if (!m->batch.dsts || !m->batch.srcs || !m->batch.sizes || m->batch.count == 0) return 0;
        batch_copy(ev, &m->batch, 0);
        break;
    }
    case H_CPY_3DBATCH: {
        /* As H_CPY_BATCH, with 3D copies between pointers and arrays. */
        if (!ok) return 0;
        switch (in.elem) {
        case 1:
            m->ops3d = ((const p_cuMemcpy3DBatchAsync *)pp)->opList;
            m->nops3d = ((const p_cuMemcpy3DBatchAsync *)pp)->numOps;
            ev->stream = norm_stream(((const p_cuMemcpy3DBatchAsync *)pp)->hStream, pt);
            break;
        case 2:
            m->ops3d = ((const p_cuMemcpy3DBatchAsync_v2 *)pp)->opList;
            m->nops3d = ((const p_cuMemcpy3DBatchAsync_v2 *)pp)->numOps;
            ev->stream = norm_stream(((const p_cuMemcpy3DBatchAsync_v2 *)pp)->hStream, pt);
            break;
        default:
            m->ops3d = ((const p_cuMemcpy3DWithAttributesAsync *)pp)->op;
            m->nops3d = 1;
            ev->stream = norm_stream(((const p_cuMemcpy3DWithAttributesAsync *)pp)->hStream, pt);
        }
        if (!m->ops3d || m->nops3d == 0) return 0;
        batch_copy3d(ev, &m->ops3d[0]);
        break;
    }
    case H_CPY_3DPEER: {
        const p_cuMemcpy3DPeer *p = pp;
        if (!p->pCopy) break;
        READ_COPY3D(p->pCopy, ev);
        if (in.async) ev->stream = norm_stream(p->hStream, pt);
        break;
    }
    case H_SET2D: {
        uint64_t pitch, w, h;
        if (in.elem == 1) {
            const p_cuMemsetD2D8 *p = pp;
            ev->ptr = p->dstDevice, pitch = p->dstPitch, w = p->Width, h = p->Height;
            if (in.async) ev->stream = norm_stream(p->hStream, pt);
        } else if (in.elem == 2) {
            const p_cuMemsetD2D16 *p = pp;
            ev->ptr = p->dstDevice, pitch = p->dstPitch, w = p->Width * 2, h = p->Height;
            if (in.async) ev->stream = norm_stream(p->hStream, pt);
        } else {
            const p_cuMemsetD2D32 *p = pp;
            ev->ptr = p->dstDevice, pitch = p->dstPitch, w = p->Width * 4, h = p->Height;
            if (in.async) ev->stream = norm_stream(p->hStream, pt);
        }
        ev->size = span(pitch, h, w, h, 1);
        break;
    }
    case H_POOL_CREATE: {
        const p_cuMemPoolCreate *p = pp;
        ev->op = OP_POOL_CREATE;
        if (ok && p->pool) ev->pool = (uint64_t)(uintptr_t)*p->pool;
        break;
    }
    case H_GRAPH_ALLOC: case H_GRAPH_NODE: case H_GRAPH_NODE_V2: {
        /* A node added by hand, by its type (cuGraphAddNode) or a memory
         * node (cuGraphAddMemAllocNode). A memory node allocates at each
         * launch, at the address the driver fills in now; the analyzer
         * leaves graph memory alone, but the program may free it after a
         * launch. */
        const unsigned char *np = in.h == H_GRAPH_NODE_V2 ? ((const p_cuGraphAddNode_v2 *)pp)->nodeParams
                                                          : ((const p_graph_add_node *)pp)->nodeParams;
        if (!ok || !np) return 0;
        if (in.h != H_GRAPH_ALLOC) {
            CUgraph g = in.h == H_GRAPH_NODE_V2 ? ((const p_cuGraphAddNode_v2 *)pp)->hGraph
                                                : ((const p_graph_add_node *)pp)->hGraph;
            int type;
            const unsigned char *own = node_params(np, &type);
            /* A copy node's CUDA_MEMCPY3D comes after its header. */
            if (work_node(ts, ev, type, type == SC_GRAPH_NODE_TYPE_MEMCPY ? own + SC_MEMCPY_NODE_COPY : own, 1, g))
                break;
            if (type == SC_GRAPH_NODE_TYPE_GRAPH) { /* a child graph node: a copy of the child's work */
                ev->op = OP_GRAPH_CLONE;
                ev->graph = (uint64_t)(uintptr_t)g;
                ev->src = child_graph_of(own);
                break;
            }
            if (type == SC_GRAPH_NODE_TYPE_CONDITIONAL) {
                /* One event a body graph, which the driver made: the
                 * program fills them later. */
                const sc_conditional_node_params *c = (const sc_conditional_node_params *)own;
                CUgraphNode *node = (CUgraphNode *)((const p_graph_add_node *)pp)->phGraphNode;
                ev->graph = (uint64_t)(uintptr_t)g;
                if (c->phGraph_out && c->size > 0) {
                    ev->node = node ? (uint64_t)(uintptr_t)*node : 0; /* cuGraphDestroyNode drops its m->bodies */
                    ev->op = OP_GRAPH_CLONE;
                    ev->flags |= FLAG_CONDITIONAL;
                    m->bodies = c->phGraph_out;
                    m->nbodies = c->size;
                    ev->src = (uint64_t)(uintptr_t)m->bodies[0];
                } else {
                    ev->op = OP_GRAPH_FORGET; /* m->bodies not given back: the graph's work is unknown */
                }
                break;
            }
            CUgraphNode *ph = (CUgraphNode *)((const p_graph_add_node *)pp)->phGraphNode;
            if (event_node(ev, type, own, (uint64_t)(uintptr_t)g, 0, ph ? (uint64_t)(uintptr_t)*ph : 0)) {
                ev->flags |= FLAG_LIFETIME; /* a new node */
                remember_event_node(ph, g);
                break;
            }
            if (type == SC_GRAPH_NODE_TYPE_BATCH_MEM_OP) {
                if (!memop_node(ev, (const sc_memop_node_params *)own, g, &m->memops, &m->nmemops)) return 0;
                break;
            }
            if (type == SC_GRAPH_NODE_TYPE_EMPTY || type == SC_GRAPH_NODE_TYPE_HOST)
                return 0; /* no device memory, no event: the graph's known work stays whole */
            if (type != SC_GRAPH_NODE_TYPE_MEM_ALLOC) { /* other work added to the graph */
                ev->op = OP_GRAPH_FORGET;
                ev->graph = (uint64_t)(uintptr_t)g;
                break;
            }
            np = own;
        }
        ev->op = OP_MALLOC_ASYNC;
        ev->flags |= FLAG_GRAPH_ALLOC;
        memcpy(&ev->size, np + SC_MEM_ALLOC_NODE_BYTESIZE, sizeof ev->size);
        memcpy(&ev->ptr, np + SC_MEM_ALLOC_NODE_DPTR, sizeof ev->ptr);
        if (ev->ptr) *alloc_add = (int64_t)ev->ptr;
        break;
    }
    case H_GRAPH_KERNEL_NODE: case H_GRAPH_MEMCPY_NODE: case H_GRAPH_MEMSET_NODE: {
        if (!ok) return 0; /* no node */
        const p_graph_add_node *p = pp;
        int type = in.h == H_GRAPH_KERNEL_NODE   ? SC_GRAPH_NODE_TYPE_KERNEL
                   : in.h == H_GRAPH_MEMCPY_NODE ? SC_GRAPH_NODE_TYPE_MEMCPY
                                                 : SC_GRAPH_NODE_TYPE_MEMSET;
        if (!work_node(ts, ev, type, p->nodeParams, in.elem == 2, p->hGraph)) return 0;
        break;
    }
    case H_GRAPH_MEMOP_NODE: {
        if (!ok) return 0; /* no node */
        const p_graph_add_node *p = pp;
        if (!memop_node(ev, (const sc_memop_node_params *)p->nodeParams, p->hGraph, &m->memops, &m->nmemops)) return 0;
        break;
    }
    case H_GRAPH_CLONE: {
        if (!ok) return 0; /* no clone */
        const p_graph_clone *p = pp;
        ev->op = OP_GRAPH_CLONE;
        ev->flags |= FLAG_LIFETIME; /* a new graph */
        ev->graph = p->phGraphClone ? (uint64_t)(uintptr_t)*p->phGraphClone : 0;
        ev->src = (uint64_t)(uintptr_t)p->originalGraph;
        if (!ev->graph) return 0;
        break;
    }
    case H_GRAPH_CHILD: {
        if (!ok) return 0;
        const p_graph_add_child *p = pp;
        ev->op = OP_GRAPH_CLONE;
        ev->graph = (uint64_t)(uintptr_t)p->hGraph;
        ev->src = (uint64_t)(uintptr_t)p->childGraph;
        break;
    }
    case H_GRAPH_EVENT_NODE: {
        if (!ok) return 0; /* no node */
        const p_graph_add_event_node *p = pp;
        set_event_node(ev, in.elem == EVNODE_RECORD, p->event, (uint64_t)(uintptr_t)p->hGraph, 0,
                       p->phGraphNode ? (uint64_t)(uintptr_t)*p->phGraphNode : 0);
        ev->flags |= FLAG_LIFETIME; /* a new node */
        remember_event_node(p->phGraphNode, p->hGraph);
        break;
    }
    case H_GRAPH_NODE_SET_EVENT: {
        if (!ok) return 0;
        const p_graph_node_set_event *p = pp;
        uint64_t g = graph_of_node(p->hNode);
        if (!g) return 0; /* a captured node on a driver that cannot say whose */
        set_event_node(ev, in.elem == EVNODE_RECORD, p->event, g, 0, (uint64_t)(uintptr_t)p->hNode);
        break;
    }
    case H_GRAPH_EXEC_SET_EVENT: {
        if (!ok) return 0;
        const p_graph_exec_set_event *p = pp;
        /* hNode is the graph's node: the executable graph's counterpart. */
        set_event_node(ev, in.elem == EVNODE_RECORD, p->event, 0, (uint64_t)(uintptr_t)p->hGraphExec,
                       (uint64_t)(uintptr_t)p->hNode);
        break;
    }
    case H_GRAPH_NODE_SET_PARAMS: case H_GRAPH_EXEC_SET_PARAMS: {
        if (!ok) return 0;
        int exec_level = in.h == H_GRAPH_EXEC_SET_PARAMS;
        const unsigned char *np = exec_level ? ((const p_graph_exec_set_params *)pp)->nodeParams
                                             : ((const p_graph_node_set_params *)pp)->nodeParams;
        if (!np) return 0;
        int type;
        const unsigned char *own = node_params(np, &type);
        if (type == SC_GRAPH_NODE_TYPE_HOST || type == SC_GRAPH_NODE_TYPE_EMPTY)
            return 0; /* no device memory, no event: the graph's known work stays whole */
        if (type == SC_GRAPH_NODE_TYPE_BATCH_MEM_OP) /* new operations: after the forget below */
            m->memops_after = node_memops((const sc_memop_node_params *)own, &m->memops, &m->nmemops);
        if (exec_level) {
            const p_graph_exec_set_params *p = pp;
            if (event_node(ev, type, own, 0, (uint64_t)(uintptr_t)p->hGraphExec, (uint64_t)(uintptr_t)p->hNode)) break;
            ev->op = OP_GRAPH_FORGET;
            ev->exec = (uint64_t)(uintptr_t)p->hGraphExec;
            if (!ev->exec) return 0;
            if (type == SC_GRAPH_NODE_TYPE_GRAPH) { /* a child graph node given a new graph: as cuGraphExecChildGraphNodeSetParams */
                ev->node = (uint64_t)(uintptr_t)p->hNode;
                ev->src = child_graph_of(own);
            }
            break;
        }
        const p_graph_node_set_params *p = pp;
        if (type == SC_GRAPH_NODE_TYPE_EVENT_RECORD || type == SC_GRAPH_NODE_TYPE_WAIT_EVENT) {
            uint64_t g = graph_of_node(p->hNode);
            if (!g || !event_node(ev, type, own, g, 0, (uint64_t)(uintptr_t)p->hNode)) return 0;
            break;
        }
        ev->op = OP_GRAPH_FORGET; /* a node's parameters: its graph is not named */
        ev->graph = SC_ALL_GRAPHS;
        break;
    }
    case H_GRAPH_FORGET: {
        if (!ok) return 0; /* nothing changed */
        const p_first_two *p = pp;
        ev->op = OP_GRAPH_FORGET;
        switch (in.elem) {
        case FORGET_EXEC: ev->exec = (uint64_t)(uintptr_t)p->first; break;
        case FORGET_EXEC_NODE: /* a node enabled or disabled: its event nodes may change */
            ev->exec = (uint64_t)(uintptr_t)p->first;
            ev->node = (uint64_t)(uintptr_t)p->second;
            break;
        case FORGET_EXEC_CHILD: /* a child graph replaced: and the new one's event nodes come in */
            ev->exec = (uint64_t)(uintptr_t)p->first;
            ev->node = (uint64_t)(uintptr_t)p->second;
            ev->src = (uint64_t)(uintptr_t)((const p_first_three *)pp)->third;
            break;
        case FORGET_EXEC_DESTROY:
            ev->exec = (uint64_t)(uintptr_t)p->first;
            ev->flags |= FLAG_LIFETIME;
            break;
        case FORGET_GRAPH: /* cuGraphDestroy */
            ev->graph = (uint64_t)(uintptr_t)p->first;
            ev->flags |= FLAG_LIFETIME;
            break;
        case FORGET_NEW_GRAPH:
            ev->graph = p->first ? (uint64_t)(uintptr_t)*(void *const *)p->first : 0;
            ev->flags |= FLAG_LIFETIME;
            break;
        case FORGET_ALL_MEMOPS: /* the graph is not named; the new operations follow */
            ev->graph = SC_ALL_GRAPHS;
            m->memops_after = node_memops((const sc_memop_node_params *)p->second, &m->memops, &m->nmemops);
            break;
        case FORGET_EXEC_MEMOPS:
            ev->exec = (uint64_t)(uintptr_t)p->first;
            m->memops_after = node_memops((const sc_memop_node_params *)((const p_first_three *)pp)->third, &m->memops, &m->nmemops);
            break;
        case FORGET_NODE:
            forget_event_node((CUgraphNode)p->first); /* its handle may come back as another node */
            ev->node = (uint64_t)(uintptr_t)p->first;
            ev->graph = SC_ALL_GRAPHS;
            break;
        default: ev->graph = SC_ALL_GRAPHS;
        }
        if (!ev->graph && !ev->exec) return 0;
        break;
    }
    case H_UNLOAD:
        if (ok) sc_layouts_forget();
        return 0;
    case H_POOL_EXPORT:
        ev->op = OP_POOL_EXPORT;
        ev->pool = (uint64_t)(uintptr_t)((const p_cuMemPoolExportToShareableHandle *)pp)->pool;
        break;
    case H_POOL_IMPORT: {
        const p_cuMemPoolImportFromShareableHandle *p = pp;
        ev->op = OP_POOL_IMPORT;
        if (ok && p->pool_out) ev->pool = (uint64_t)(uintptr_t)*p->pool_out;
        break;
    }
    case H_PTR_EXPORT: {
        const p_cuMemPoolExportPointer *p = pp;
        ev->op = OP_PTR_EXPORT;
        ev->ptr = p->ptr;
        if (ok) ev->value = ipc_key(p->shareData_out);
        break;
    }
    case H_PTR_IMPORT: case H_IPC_MEM_OPEN: {
        /* A mapping of another process's allocation: live here from now,
         * and its address is one that launches' parameters can name. */
        CUdeviceptr *out;
        if (in.h == H_PTR_IMPORT) {
            const p_cuMemPoolImportPointer *p = pp;
            ev->op = OP_PTR_IMPORT;
            ev->pool = (uint64_t)(uintptr_t)p->pool;
            ev->value = ipc_key(p->shareData);
            out = p->ptr_out;
        } else {
            const p_cuIpcOpenMemHandle *p = pp;
            ev->op = OP_IPC_MEM_OPEN;
            ev->value = ipc_key(&p->handle);
            out = p->pdptr;
        }
        if (ok && out && *out) {
            ev->ptr = *out;
            ev->size = range_size(ev->ptr);
            *alloc_add = (int64_t)ev->ptr;
        }
        break;
    }
    case H_IPC_EVENT_GET: {
        const p_cuIpcGetEventHandle *p = pp;
        ev->op = OP_IPC_EVENT_EXPORT;
        ev->event = (uint64_t)(uintptr_t)p->event;
        if (ok) ev->value = ipc_key(p->pHandle);
        break;
    }
    case H_IPC_EVENT_OPEN: {
        const p_cuIpcOpenEventHandle *p = pp;
        ev->op = OP_IPC_EVENT_OPEN;
        ev->value = ipc_key(&p->handle);
        if (ok && p->phEvent) ev->event = (uint64_t)(uintptr_t)*p->phEvent;
        break;
    }
    case H_IPC_MEM_GET: {
        const p_cuIpcGetMemHandle *p = pp;
        ev->op = OP_IPC_MEM_EXPORT;
        ev->ptr = p->dptr;
        if (ok) ev->value = ipc_key(p->pHandle);
        break;
    }
    case H_IPC_MEM_CLOSE:
        ev->op = OP_IPC_MEM_CLOSE;
        ev->ptr = ((const p_cuMemFree *)pp)->dptr;
        break;
    }
    return m->batch.count > 1 || m->nbodies > 1 || m->nops3d > 1 || m->nmemops > 1 || m->memops_after ? 2 : 1;
}

/* Writes the events of a call after its first (decode_rare). */
SC_COLD static void emit_more(sc_tstate *ts, sc_event *ev, const more_events *m) {
    for (size_t i = 1; i < m->batch.count; i++) { /* a batch's other copies */
        batch_copy(ev, &m->batch, i);
        sc_emit(ts, ev);
    }
    for (unsigned i = 1; i < m->nbodies; i++) { /* a conditional node's other bodies */
        ev->src = (uint64_t)(uintptr_t)m->bodies[i];
        sc_emit(ts, ev);
    }
    for (size_t i = 1; i < m->nops3d; i++) { /* a 3D batch's other copies */
        batch_copy3d(ev, &m->ops3d[i]);
        sc_emit(ts, ev);
    }
    if (m->memops_after) { /* a node's new operations: made at its graph's launches, graph not named */
        ev->op = OP_STREAM_MEMOP;
        ev->flags = FLAG_GRAPH_NODE;
        ev->graph = SC_ALL_GRAPHS;
        ev->exec = ev->node = ev->src = 0;
        batch_memop(ev, m->memops, 0);
        sc_emit(ts, ev);
    }
    for (unsigned i = 1; i < m->nmemops; i++) { /* a batch's other memory operations */
        batch_memop(ev, m->memops, i);
        sc_emit(ts, ev);
    }
}

SC_HOT static void handle_driver(sc_tstate *ts, CUpti_CallbackId cbid, const sc_CUpti_CallbackData *cb) {
    drv_info in = drv[cbid];
    const void *pp = cb->functionParams;
    if (in.h == H_NONE || (!pp && in.h != H_CTX_SYNC)) return; /* cuCtxSynchronize has no parameters */
    sc_event ev;
    event_clear(&ev);
    ev.result = cb->functionReturnValue ? *(const CUresult *)cb->functionReturnValue : 0;
    int ok = ev.result == CUDA_SUCCESS;
    int pt = in.pt;
    int64_t alloc_add = -1; /* ptr to add to the allocation map after recording */
    uint64_t alloc_free = 0;
    more_events more; /* decode_rare fills it */
    int rare = 0;     /* decode_rare's answer */
    int64_t t = sc_stats ? sc_stat_clock() : 0;

    switch (in.h) {
    case H_STREAM_SYNC:
        ev.op = OP_STREAM_SYNC;
        ev.stream = norm_stream(((const p_stream_first *)pp)->hStream, pt);
        break;
    case H_STREAM_QUERY:
        ev.op = OP_STREAM_QUERY;
        ev.stream = norm_stream(((const p_stream_first *)pp)->hStream, pt);
        break;
    case H_HOST_FUNC:
        ev.op = OP_HOST_FUNC;
        ev.stream = norm_stream(((const p_cuLaunchHostFunc *)pp)->hStream, pt);
        break;
    case H_GRAPH_LAUNCH:
        ev.op = OP_GRAPH_LAUNCH;
        ev.stream = norm_stream(((const p_cuGraphLaunch *)pp)->hStream, pt);
        ev.exec = (uint64_t)(uintptr_t)((const p_cuGraphLaunch *)pp)->hGraphExec;
        break;
    case H_EVENT_RECORD: {
        const p_cuEventRecord *p = pp;
        ev.op = OP_EVENT_RECORD;
        ev.event = (uint64_t)(uintptr_t)p->hEvent;
        ev.stream = norm_stream(p->hStream, pt);
        if (in.elem == 1 && (((const p_cuEventRecordWithFlags *)pp)->flags & SC_EVENT_RECORD_EXTERNAL))
            ev.flags |= FLAG_EXTERNAL;
        break;
    }
    case H_EVENT_SYNC:
        ev.op = OP_EVENT_SYNC;
        ev.event = (uint64_t)(uintptr_t)((const p_event_first *)pp)->hEvent;
        break;
    case H_EVENT_QUERY:
        ev.op = OP_EVENT_QUERY;
        ev.event = (uint64_t)(uintptr_t)((const p_event_first *)pp)->hEvent;
        break;
    case H_STREAM_WAIT: {
        const p_cuStreamWaitEvent *p = pp;
        ev.op = OP_STREAM_WAIT;
        ev.stream = norm_stream(p->hStream, pt);
        ev.event = (uint64_t)(uintptr_t)p->hEvent;
        if (p->Flags & SC_EVENT_WAIT_EXTERNAL) ev.flags |= FLAG_EXTERNAL;
        break;
    }
    case H_CTX_SYNC:
        ev.op = OP_DEVICE_SYNC;
        break;
    case H_MALLOC_ASYNC: {
        const p_cuMemAllocAsync *p = pp;
        ev.op = OP_MALLOC_ASYNC;
        ev.size = p->bytesize;
        ev.stream = norm_stream(p->hStream, pt);
        if (ok && p->dptr) alloc_add = (int64_t)(ev.ptr = *p->dptr);
        break;
    }
    case H_MALLOC_POOL: {
        const p_cuMemAllocFromPoolAsync *p = pp;
        ev.op = OP_MALLOC_ASYNC;
        ev.size = p->bytesize;
        ev.pool = (uint64_t)(uintptr_t)p->pool;
        ev.stream = norm_stream(p->hStream, pt);
        if (ok && p->dptr) alloc_add = (int64_t)(ev.ptr = *p->dptr);
        break;
    }
    case H_FREE_ASYNC: {
        const p_cuMemFreeAsync *p = pp;
        ev.op = OP_FREE_ASYNC;
        ev.ptr = p->dptr;
        ev.stream = norm_stream(p->hStream, pt);
        if (ok) alloc_free = p->dptr;
        break;
    }
    case H_FREE:
        ev.op = OP_FREE;
        ev.ptr = ((const p_cuMemFree *)pp)->dptr;
        if (ok) alloc_free = ev.ptr;
        break;
    case H_LAUNCH: {
        const p_cuLaunchKernel *p = pp;
        ev.op = OP_LAUNCH;
        ev.stream = norm_stream(p->hStream, pt);
        ev.nptrs = sc_launch_scan(ts, p->f, cb->symbolName, p->kernelParams, p->extra, &ev.kernel, &ev.nweak);
        break;
    }
    case H_LAUNCH_COOP: {
        const p_cuLaunchCooperativeKernel *p = pp;
        ev.op = OP_LAUNCH;
        ev.stream = norm_stream(p->hStream, pt);
        ev.nptrs = sc_launch_scan(ts, p->f, cb->symbolName, p->kernelParams, NULL, &ev.kernel, &ev.nweak);
        break;
    }
    case H_LAUNCH_EX: {
        const p_cuLaunchKernelEx *p = pp;
        ev.op = OP_LAUNCH;
        ev.stream = norm_stream(p->config ? p->config->hStream : NULL, pt);
        ev.nptrs = sc_launch_scan(ts, p->f, cb->symbolName, p->kernelParams, p->extra, &ev.kernel, &ev.nweak);
        break;
    }
    case H_CPY_UNIFIED: {
        const p_cuMemcpy *p = pp;
        unified_copy(&ev, p->dst, p->src, p->ByteCount);
        if (in.async) ev.stream = norm_stream(p->hStream, pt);
        break;
    }
    case H_CPY_HTOD: {
        const p_cuMemcpyHtoD *p = pp;
        ev.ptr = p->dstDevice;
        ev.src = (uint64_t)(uintptr_t)p->srcHost;
        ev.size = p->ByteCount;
        ev.kind = COPY_H2D;
        ev.flags = host_flags(p->srcHost);
        if (in.async) ev.stream = norm_stream(p->hStream, pt);
        break;
    }
    case H_CPY_DTOH: {
        const p_cuMemcpyDtoH *p = pp;
        ev.ptr = (uint64_t)(uintptr_t)p->dstHost;
        ev.src = p->srcDevice;
        ev.size = p->ByteCount;
        ev.kind = COPY_D2H;
        ev.flags = host_flags(p->dstHost);
        if (in.async) ev.stream = norm_stream(p->hStream, pt);
        break;
    }
    case H_CPY_DTOD: {
        const p_cuMemcpy *p = pp;
        ev.ptr = p->dst;
        ev.src = p->src;
        ev.size = p->ByteCount;
        ev.kind = COPY_D2D;
        if (in.async) ev.stream = norm_stream(p->hStream, pt);
        break;
    }
    case H_SET: {
        /* D8/D16/D32 differ only in the value's type, which we skip; read
         * each layout as declared so the offsets of N and hStream are right. */
        if (in.elem == 1) {
            const p_cuMemsetD8 *p = pp;
            ev.ptr = p->dstDevice;
            ev.size = p->N;
            if (in.async) ev.stream = norm_stream(p->hStream, pt);
        } else if (in.elem == 2) {
            const p_cuMemsetD16 *p = pp;
            ev.ptr = p->dstDevice;
            ev.size = (uint64_t)p->N * 2;
            if (in.async) ev.stream = norm_stream(p->hStream, pt);
        } else {
            const p_cuMemsetD32 *p = pp;
            ev.ptr = p->dstDevice;
            ev.size = (uint64_t)p->N * 4;
            if (in.async) ev.stream = norm_stream(p->hStream, pt);
        }
        break;
    }
    default:
        if (!(rare = decode_rare(ts, in, pp, ok, &ev, &alloc_add, &more))) return;
    }
    switch (in.h) { /* ops that depend on sync/async */
    case H_CPY_UNIFIED: case H_CPY_HTOD: case H_CPY_DTOH: case H_CPY_DTOD: case H_CPY_PEER:
    case H_CPY_2D: case H_CPY_3D: case H_CPY_3DPEER: case H_CPY_BATCH: case H_CPY_3DBATCH:
        ev.op = in.async ? OP_MEMCPY_ASYNC : OP_MEMCPY;
        if (!in.async) ev.stream = pt ? 2 : 0; /* the stream a synchronous copy runs on */
        break;
    case H_SET: case H_SET2D:
        ev.op = in.async ? OP_MEMSET_ASYNC : OP_MEMSET;
        if (!in.async) ev.stream = pt ? 2 : 0;
        break;
    }
    if (!ev.op) return;

    ev.device = device_of(ts, cb->context);
    if (!in.async && (in.h == H_CPY_PEER || in.h == H_CPY_3DPEER)) {
        /* cuMemcpyPeer is serialized with all work of the current device and
         * of both sides' devices: the analyzer needs to know which. */
        ev.flags |= FLAG_PEER;
        ev.peer_src = device_of_ptr(ev.src, ev.device);
        ev.peer_dst = device_of_ptr(ev.ptr, ev.device);
    }
    /* API name: the runtime function in progress on this thread, if any. */
    uint32_t sid;
    if (ts->rt_depth > 0 && ts->rt_cbid < MAXCB && rt_disp[ts->rt_cbid]) {
        sid = atomic_load_explicit(&rt_sid[ts->rt_cbid], memory_order_relaxed);
        if (!sid) atomic_store(&rt_sid[ts->rt_cbid], sid = sc_intern(rt_disp[ts->rt_cbid]));
    } else {
        sid = atomic_load_explicit(&drv_sid[cbid], memory_order_relaxed);
        if (!sid) atomic_store(&drv_sid[cbid], sid = sc_intern(drv_disp[cbid]));
    }
    ev.api = sid;
    ev.ptrs = ts->ptrs;
    phase_done(SC_PHASE_DECODE, &t);
    ev.stack = sc_stack_capture(ts);
    phase_done(SC_PHASE_STACK, &t);
    /* What we got may have been released by another thread a moment ago:
     * its free or destroy goes in the trace first. */
    if (ok && alloc_add >= 0)
        sc_release_wait(ts, SC_REL_MEMORY, ev.ptr, sc_range_end(ev.ptr, ev.size));
    else if (ok && ev.op == OP_STREAM_CREATE && ev.stream)
        sc_release_wait(ts, SC_REL_STREAM, ev.stream, ev.stream + 1);
    else if (ok && (ev.op == OP_EVENT_CREATE || ev.op == OP_IPC_EVENT_OPEN) && ev.event)
        sc_release_wait(ts, SC_REL_EVENT, ev.event, ev.event + 1);
    sc_emit(ts, &ev);
    if (rare == 2) emit_more(ts, &ev, &more);
    phase_done(SC_PHASE_EMIT, &t);
    if (alloc_add >= 0) sc_alloc_add((uint64_t)alloc_add, ev.size);
    if (ok && ev.op == OP_IPC_MEM_CLOSE) alloc_free = ev.ptr; /* decode_rare's: handle_driver's own are set above */
    if (alloc_free) sc_alloc_free(alloc_free);
    phase_done(SC_PHASE_MAP, &t);
}

/* At the entry of a free or destroy: what it gives back (releases.c). */
SC_HOT static void announce_release(sc_tstate *ts, CUpti_CallbackId cbid, const sc_CUpti_CallbackData *cb) {
    const void *pp = cb->functionParams;
    if (!pp) return;
    uint64_t v = 0;
    switch (drv[cbid].h) {
    case H_FREE: case H_IPC_MEM_CLOSE: v = ((const p_cuMemFree *)pp)->dptr; break;
    case H_FREE_ASYNC: v = ((const p_cuMemFreeAsync *)pp)->dptr; break;
    case H_STREAM_DESTROY: v = (uint64_t)(uintptr_t)((const p_stream_first *)pp)->hStream; break;
    case H_EVENT_DESTROY: v = (uint64_t)(uintptr_t)((const p_event_first *)pp)->hEvent; break;
    }
    if (v) sc_release_begin(ts, drv[cbid].release, v, drv[cbid].release == SC_REL_MEMORY ? sc_alloc_end_of(v) : v + 1);
}

SC_HOT void sc_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *cbdata) {
    (void)userdata;
    if (!atomic_load_explicit(&sc_active, memory_order_relaxed) || !cbdata || cbid >= MAXCB || sc_callback_only ||
        atomic_load_explicit(&sc_trace_failed, memory_order_relaxed))
        return;
    const sc_CUpti_CallbackData *cb = cbdata;
    int driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
    int driver_exit = driver && cb->callbackSite == CUPTI_API_EXIT;
    /* Driver entries matter only for frees and destroys. */
    if (driver && (drv[cbid].h == H_NONE || (!driver_exit && !drv[cbid].release))) return;
    if (!driver && domain != CUPTI_CB_DOMAIN_RUNTIME_API) return;
    int saved = errno; /* the program must never see ours */
    sc_tstate *ts = sc_tls();
    if (ts && !ts->busy) {
        if (driver && !driver_exit) {
            ts->busy = 1;
            announce_release(ts, cbid, cb);
            ts->busy = 0;
        } else if (driver_exit) {
            ts->busy = 1; /* the driver calls we make re-enter this callback */
            if (sc_stats) {
                int64_t t0 = sc_stat_clock();
                handle_driver(ts, cbid, cb);
                atomic_fetch_add_explicit(&sc_stat_handler_time, (uint64_t)(sc_stat_clock() - t0), memory_order_relaxed);
                atomic_fetch_add_explicit(&sc_stat_handled, 1, memory_order_relaxed);
            } else {
                handle_driver(ts, cbid, cb);
            }
            if (drv[cbid].release) sc_release_end(ts); /* recorded (or nothing to record) */
            ts->busy = 0;
        } else if (cb->callbackSite == CUPTI_API_ENTER) {
            if (ts->rt_depth++ == 0) ts->rt_cbid = cbid;
        } else if (ts->rt_depth > 0) {
            ts->rt_depth--;
        }
    }
    errno = saved;
}
