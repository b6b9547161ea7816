//go:build ignore

/*
 * apitable.c: the driver functions the shim records, each with its
 * decoder (decode.h), and the setup that finds their callback ids.
 *
 * Only the callback ids we need are enabled; they are found once at start by
 * name (cuptiGetCallbackName), so no CUPTI header and no numeric id is built
 * in. RUNTIME_API callbacks, when enabled, only name the runtime function in
 * progress (callbacks.c).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"

/* Exact names, versions included: a version suffix can change the layout
 * (cuMemAlloc v1 had 32-bit pointers), so only layouts we know are read. */
static const sc_api_row table[] = {
    {"cuStreamCreate", sc_dec_stream_create, 0, 0},
    {"cuStreamCreateWithPriority", sc_dec_stream_create_prio, 0, 0},
    {"cuStreamDestroy", sc_dec_stream_destroy, 0, 0},
    {"cuStreamDestroy_v2", sc_dec_stream_destroy, 0, 0},
    {"cuEventCreate", sc_dec_event_create, 0, 0},
    {"cuEventRecord", sc_dec_event_record, 0, 0},
    {"cuEventRecordWithFlags", sc_dec_event_record, 0, 1}, /* elem 1: with flags */
    {"cuEventDestroy", sc_dec_event_destroy, 0, 0},
    {"cuEventDestroy_v2", sc_dec_event_destroy, 0, 0},
    {"cuStreamWaitEvent", sc_dec_stream_wait, 0, 0},
    {"cuStreamSynchronize", sc_dec_stream_sync, 0, 0},
    {"cuEventSynchronize", sc_dec_event_sync, 0, 0},
    {"cuCtxSynchronize", sc_dec_ctx_sync, 0, 0},
    {"cuCtxSynchronize_v2", sc_dec_ctx_sync, 0, 0},
    {"cuStreamQuery", sc_dec_stream_query, 0, 0},
    {"cuEventQuery", sc_dec_event_query, 0, 0},
    {"cuMemAllocAsync", sc_dec_malloc_async, 1, 0},
    {"cuMemAllocFromPoolAsync", sc_dec_malloc_pool, 1, 0},
    {"cuMemAlloc_v2", sc_dec_malloc, 0, FAMILY_DEVICE}, /* elem: the allocation family */
    {"cuMemAllocManaged", sc_dec_malloc, 0, FAMILY_MANAGED},
    {"cuMemAllocPitch_v2", sc_dec_malloc_pitch, 0, 0},
    {"cuMemAllocHost_v2", sc_dec_malloc_host, 0, 0}, /* v1 had a 32-bit size */
    {"cuMemHostAlloc", sc_dec_malloc_host, 0, 0},
    {"cuMemHostRegister", sc_dec_host_register, 0, 0}, /* v1 and _v2 take the same parameters */
    {"cuMemHostRegister_v2", sc_dec_host_register, 0, 0},
    {"cuMemFreeAsync", sc_dec_free_async, 1, 0},
    {"cuMemFree_v2", sc_dec_free, 0, 0},
    {"cuMemFreeHost", sc_dec_free_host, 0, FAMILY_HOST}, /* elem: the family the API frees */
    {"cuMemHostUnregister", sc_dec_free_host, 0, FAMILY_REGISTERED},
    {"cuMemMap", sc_dec_vmm_map, 0, 0},
    {"cuMemUnmap", sc_dec_vmm_unmap, 0, 0},
    {"cuMemPoolSetAttribute", sc_dec_pool_set_attr, 0, 0},
    {"cuDeviceSetMemPool", sc_dec_device_set_pool, 0, 0},
    {"cuMemSetMemPool", sc_dec_mem_set_pool, 0, 0},
    {"cuMemPoolTrimTo", sc_dec_pool_trim, 0, 0},
    {"cuLaunchKernel", sc_dec_launch, 1, 0},
    {"cuLaunchCooperativeKernel", sc_dec_launch_coop, 1, 0},
    {"cuLaunchKernelEx", sc_dec_launch_ex, 1, 0},
    {"cuMemcpy", sc_dec_cpy_unified, 0, 0},
    {"cuMemcpyAsync", sc_dec_cpy_unified, 1, 0},
    {"cuMemcpyHtoD_v2", sc_dec_cpy_htod, 0, 0},
    {"cuMemcpyHtoDAsync_v2", sc_dec_cpy_htod, 1, 0},
    {"cuMemcpyDtoH_v2", sc_dec_cpy_dtoh, 0, 0},
    {"cuMemcpyDtoHAsync_v2", sc_dec_cpy_dtoh, 1, 0},
    {"cuMemcpyDtoD_v2", sc_dec_cpy_dtod, 0, 0},
    {"cuMemcpyDtoDAsync_v2", sc_dec_cpy_dtod, 1, 0},
    {"cuMemcpyPeer", sc_dec_cpy_peer, 0, 0},
    {"cuMemcpyPeerAsync", sc_dec_cpy_peer, 1, 0},
    {"cuMemcpy2D_v2", sc_dec_cpy_2d, 0, 0},
    {"cuMemcpy2DUnaligned_v2", sc_dec_cpy_2d, 0, 0},
    {"cuMemcpy2DAsync_v2", sc_dec_cpy_2d, 1, 0},
    {"cuMemcpy3D_v2", sc_dec_cpy_3d, 0, 0},
    {"cuMemcpy3DAsync_v2", sc_dec_cpy_3d, 1, 0},
    {"cuMemcpy3DPeer", sc_dec_cpy_3dpeer, 0, 0},
    {"cuMemcpy3DPeerAsync", sc_dec_cpy_3dpeer, 1, 0},
    {"cuStreamWaitValue32", sc_dec_stream_memop, 1, SC_MEMOP_WAIT32},
    {"cuStreamWaitValue32_v2", sc_dec_stream_memop, 1, SC_MEMOP_WAIT32},
    {"cuStreamWaitValue64", sc_dec_stream_memop, 1, SC_MEMOP_WAIT64},
    {"cuStreamWaitValue64_v2", sc_dec_stream_memop, 1, SC_MEMOP_WAIT64},
    {"cuStreamWriteValue32", sc_dec_stream_memop, 1, SC_MEMOP_WRITE32},
    {"cuStreamWriteValue32_v2", sc_dec_stream_memop, 1, SC_MEMOP_WRITE32},
    {"cuStreamWriteValue64", sc_dec_stream_memop, 1, SC_MEMOP_WRITE64},
    {"cuStreamWriteValue64_v2", sc_dec_stream_memop, 1, SC_MEMOP_WRITE64},
    {"cuStreamBatchMemOp", sc_dec_stream_memop, 1, 0},
    {"cuStreamBatchMemOp_v2", sc_dec_stream_memop, 1, 0},
    {"cuMemcpyBatchAsync", sc_dec_cpy_batch, 1, 1},
    {"cuMemcpyBatchAsync_v2", sc_dec_cpy_batch, 1, 2},
    {"cuMemcpyWithAttributesAsync", sc_dec_cpy_batch, 1, 3},
    {"cuMemcpy3DBatchAsync", sc_dec_cpy_3dbatch, 1, 1},
    {"cuMemcpy3DBatchAsync_v2", sc_dec_cpy_3dbatch, 1, 2},
    {"cuMemcpy3DWithAttributesAsync", sc_dec_cpy_3dbatch, 1, 3},
    {"cuMemsetD8_v2", sc_dec_set, 0, 1},
    {"cuMemsetD16_v2", sc_dec_set, 0, 2},
    {"cuMemsetD32_v2", sc_dec_set, 0, 4},
    {"cuMemsetD8Async", sc_dec_set, 1, 1},
    {"cuMemsetD16Async", sc_dec_set, 1, 2},
    {"cuMemsetD32Async", sc_dec_set, 1, 4},
    {"cuMemsetD2D8_v2", sc_dec_set2d, 0, 1},
    {"cuMemsetD2D16_v2", sc_dec_set2d, 0, 2},
    {"cuMemsetD2D32_v2", sc_dec_set2d, 0, 4},
    {"cuMemsetD2D8Async", sc_dec_set2d, 1, 1},
    {"cuMemsetD2D16Async", sc_dec_set2d, 1, 2},
    {"cuMemsetD2D32Async", sc_dec_set2d, 1, 4},
    {"cuLaunchHostFunc", sc_dec_host_func, 1, 0},
    {"cuStreamAddCallback", sc_dec_host_func, 1, SC_HOSTFN_CALLBACK},
    {"cuStreamBeginCapture", sc_dec_capture_begin, 1, 0},
    {"cuStreamBeginCapture_v2", sc_dec_capture_begin, 1, 0},
    {"cuStreamBeginCaptureToGraph", sc_dec_capture_begin, 1, 1}, /* elem 1: into the graph it names */
    {"cuStreamEndCapture", sc_dec_capture_end, 1, 0},
    {"cuGraphLaunch", sc_dec_graph_launch, 1, 0},
    {"cuGraphInstantiate", sc_dec_graph_instantiate, 0, 0},
    {"cuGraphInstantiate_v2", sc_dec_graph_instantiate, 0, 0},
    {"cuGraphInstantiateWithFlags", sc_dec_graph_instantiate, 0, 0},
    {"cuGraphInstantiateWithParams", sc_dec_graph_instantiate, 0, 0},
    {"cuGraphExecUpdate", sc_dec_graph_exec_update, 0, 0},
    {"cuGraphExecUpdate_v2", sc_dec_graph_exec_update, 0, 0},
    {"cuMemPoolCreate", sc_dec_pool_create, 0, 0},
    {"cuGraphAddMemAllocNode", sc_dec_graph_alloc, 0, 0},
    {"cuGraphAddNode", sc_dec_graph_node, 0, 0},
    {"cuGraphAddNode_v2", sc_dec_graph_node_v2, 0, 0},
    {"cuGraphCreate", sc_dec_graph_forget, 0, FORGET_NEW_GRAPH},
    {"cuGraphClone", sc_dec_graph_clone, 0, 0},
    {"cuGraphDestroy", sc_dec_graph_forget, 0, FORGET_GRAPH},
    {"cuGraphExecDestroy", sc_dec_graph_forget, 0, FORGET_EXEC_DESTROY},
    {"cuGraphExecKernelNodeSetParams", sc_dec_graph_forget, 0, FORGET_EXEC},
    {"cuGraphExecKernelNodeSetParams_v2", sc_dec_graph_forget, 0, FORGET_EXEC},
    {"cuGraphExecMemcpyNodeSetParams", sc_dec_graph_forget, 0, FORGET_EXEC},
    {"cuGraphExecMemsetNodeSetParams", sc_dec_graph_forget, 0, FORGET_EXEC},
    {"cuGraphExecChildGraphNodeSetParams", sc_dec_graph_forget, 0, FORGET_EXEC_CHILD},
    {"cuGraphExecBatchMemOpNodeSetParams", sc_dec_graph_forget, 0, FORGET_EXEC_MEMOPS},
    {"cuGraphExecNodeSetParams", sc_dec_graph_exec_set_params, 0, 0},
    {"cuGraphNodeSetEnabled", sc_dec_graph_forget, 0, FORGET_EXEC_NODE},
    {"cuGraphAddKernelNode", sc_dec_graph_kernel_node, 0, 1},
    {"cuGraphAddKernelNode_v2", sc_dec_graph_kernel_node, 0, 2},
    {"cuGraphAddMemcpyNode", sc_dec_graph_memcpy_node, 0, 0},
    {"cuGraphAddMemsetNode", sc_dec_graph_memset_node, 0, 0},
    {"cuGraphAddChildGraphNode", sc_dec_graph_child, 0, 0},
    {"cuGraphAddBatchMemOpNode", sc_dec_graph_memop_node, 0, 0},
    {"cuGraphKernelNodeSetParams", sc_dec_graph_forget, 0, FORGET_ALL_GRAPHS},
    {"cuGraphKernelNodeSetParams_v2", sc_dec_graph_forget, 0, FORGET_ALL_GRAPHS},
    {"cuGraphMemcpyNodeSetParams", sc_dec_graph_forget, 0, FORGET_ALL_GRAPHS},
    {"cuGraphMemsetNodeSetParams", sc_dec_graph_forget, 0, FORGET_ALL_GRAPHS},
    {"cuGraphBatchMemOpNodeSetParams", sc_dec_graph_forget, 0, FORGET_ALL_MEMOPS},
    {"cuGraphNodeSetParams", sc_dec_graph_node_set_params, 0, 0},
    {"cuGraphAddEventRecordNode", sc_dec_graph_event_node, 0, EVNODE_RECORD},
    {"cuGraphAddEventWaitNode", sc_dec_graph_event_node, 0, EVNODE_WAIT},
    {"cuGraphEventRecordNodeSetEvent", sc_dec_graph_node_set_event, 0, EVNODE_RECORD},
    {"cuGraphEventWaitNodeSetEvent", sc_dec_graph_node_set_event, 0, EVNODE_WAIT},
    {"cuGraphExecEventRecordNodeSetEvent", sc_dec_graph_exec_set_event, 0, EVNODE_RECORD},
    {"cuGraphExecEventWaitNodeSetEvent", sc_dec_graph_exec_set_event, 0, EVNODE_WAIT},
    {"cuGraphDestroyNode", sc_dec_graph_forget, 0, FORGET_NODE},
    {"cuMemPoolExportToShareableHandle", sc_dec_pool_export, 0, 0},
    {"cuMemPoolImportFromShareableHandle", sc_dec_pool_import, 0, 0},
    {"cuMemPoolExportPointer", sc_dec_ptr_export, 0, 0},
    {"cuMemPoolImportPointer", sc_dec_ptr_import, 0, 0},
    {"cuIpcGetEventHandle", sc_dec_ipc_event_get, 0, 0},
    {"cuIpcOpenEventHandle", sc_dec_ipc_event_open, 0, 0},
    {"cuIpcGetMemHandle", sc_dec_ipc_mem_get, 0, 0},
    {"cuIpcOpenMemHandle", sc_dec_ipc_mem_open, 0, 0},
    {"cuIpcOpenMemHandle_v2", sc_dec_ipc_mem_open, 0, 0},
    {"cuIpcCloseMemHandle", sc_dec_ipc_mem_close, 0, 0},
    {"cuModuleUnload", sc_dec_unload, 0, 0},
    {"cuLibraryUnload", sc_dec_unload, 0, 0},
    {"cuCtxDestroy", sc_dec_unload, 0, 0},
    {"cuCtxDestroy_v2", sc_dec_unload, 0, 0},
    {"cuDevicePrimaryCtxReset", sc_dec_unload, 0, 0},
    {"cuDevicePrimaryCtxReset_v2", sc_dec_unload, 0, 0},
    {"cuDevicePrimaryCtxRelease", sc_dec_unload, 0, 0},
    {"cuDevicePrimaryCtxRelease_v2", sc_dec_unload, 0, 0},
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
    "cudaIpcOpenMemHandle", "cudaIpcCloseMemHandle", "cudaMallocHost", "cudaHostAlloc", "cudaFreeHost",
    "cudaHostRegister", "cudaHostUnregister", "cudaMemPoolSetAttribute", "cudaDeviceSetMemPool", "cudaMemSetMemPool",
    "cudaMemPoolTrimTo",
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
            uint8_t rel = release_kind(table[i].decode), tm = timed(table[i].decode);
            uint8_t hf = table[i].decode == sc_dec_host_func;
            sc_drv_calls[cbid] =
                (sc_drv_info){table[i].decode, table[i].async, table[i].elem, (uint8_t)pt, rel, tm, rel || tm || hf, hf};
            sc_drv_disp[cbid] = strdup(sc_display_name(name, disp, sizeof disp));
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
