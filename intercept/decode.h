/*
 * decode.h: what the table of driver functions (apitable.c), the decoders
 * of each API family (decode_*.c) and the per-call path (recorder.c)
 * share.
 *
 * A decoder turns one driver call, at its exit callback, into the event
 * that records it: it reads the call's parameters (CUPTI's "_params"
 * struct, cupti_abi.h) into ev and says what to record. Each row of the
 * table names the decoder of its function; the per-call path runs it and
 * then adds what every event carries (device, API name, stack) and writes
 * the event. Decoders of the calls a program makes on its per-call path are
 * SC_HOT, the others SC_COLD (see doc.go, "The per-call path").
 */
#ifndef STREAMCHECK_DECODE_H
#define STREAMCHECK_DECODE_H

#include <string.h>

#include "shim.h"

#define MAXCB 4096

/* What a call brings beside its first event: the other events the per-call
 * path writes after it (emit_more). */
typedef struct {
    sc_batch batch;                /* a batch of copies */
    const sc_memop_params *memops; /* a cuStreamBatchMemOp's operations, or a node's */
    unsigned nmemops;
    int memops_after;              /* memops are a batch memory operation node's new ones, each an event after ev */
    const sc_memcpy3d_op *ops3d;   /* a cuMemcpy3DBatchAsync's copies */
    size_t nops3d;
    CUgraph *bodies;               /* a conditional node's body graphs */
    unsigned nbodies;
} sc_more;

/* One driver call at its exit. */
typedef struct {
    sc_tstate *ts;
    const sc_CUpti_CallbackData *cb;
    const void *pp;       /* cb->functionParams */
    int ok;               /* the call succeeded */
    uint8_t async, elem;  /* the table row's */
    uint8_t pt;           /* a _ptsz/_ptds entry point: stream 0 is the per-thread stream */
    uint16_t psize;       /* the table row's */
    int64_t alloc_add;    /* an address to add to the allocation map after recording (size ev->size), or -1 */
    uint64_t alloc_free;  /* an address to take out of it, or 0 */
    sc_more *more;        /* what a decoder that returns 2 fills in (sc_more_begin first) */
} sc_call;

/* Fills ev from call c. Returns 0 to record nothing, 1 for ev, 2 for ev
 * and the events in *c->more after it. */
typedef int (*sc_decoder)(sc_call *c, sc_event *ev);

/* A row of the table (apitable.c). */
typedef struct {
    const char *name; /* driver function name without _ptsz/_ptds; exact, version included */
    sc_decoder decode;
    uint8_t async;    /* takes a stream: the copy or set is asynchronous */
    uint8_t elem;     /* what the decoder is told beside the parameters (element size, layout version...) */
    uint16_t psize;   /* the size of the parameters' "_params" struct */
} sc_api_row;

/* What the table says of each enabled driver callback id. */
typedef struct {
    sc_decoder decode; /* NULL: not recorded */
    uint8_t async, elem, pt;
    uint8_t release; /* SC_REL_*: a free or destroy, announced at its entry (releases.c) */
    uint8_t timed;   /* a synchronous allocation or free: its entry stamps the clock (sc_call_dur) */
    uint8_t entry;   /* release, timed or hostfn: the entry callback has work (one byte to test per callback) */
    uint8_t hostfn;  /* cuLaunchHostFunc, cuStreamAddCallback: the entry wraps the function (hostfn.c) */
    uint16_t psize;
} sc_drv_info;

extern sc_drv_info sc_drv_calls[MAXCB];
/* drvcalls.h's rows (apitable.c), and what the per-call path is told of a
 * call id that stands for row (pt: a per-thread-default-stream entry point;
 * name: the exported name, for the API name recorded). */
SC_HIDDEN const sc_api_row *sc_api_rows(size_t *n);
SC_HIDDEN void sc_call_info_set(uint32_t id, const sc_api_row *row, int pt, const char *name);
/* The per-call path (recorder.c), shared by the backends: at a call's
 * entry (when sc_drv_calls[id].entry says it has work there) and after it
 * returned. cb carries the parameters (functionParams, laid out as CUPTI's
 * "_params" struct), and at the exit the result and the current context. */
SC_HIDDEN void sc_call_enter(sc_tstate *ts, uint32_t id, const sc_CUpti_CallbackData *cb);
SC_HIDDEN void sc_call_exit(sc_tstate *ts, uint32_t id, const sc_CUpti_CallbackData *cb);
/* Display names ("cuMemAlloc") by callback id, and their interned ids
 * (sc_intern, set at a name's first use). */
extern char *sc_drv_disp[MAXCB], *sc_rt_disp[MAXCB];
extern _Atomic uint32_t sc_drv_sid[MAXCB], sc_rt_sid[MAXCB];

/* ---- hostfn.c: host functions that ran ---- */

/* sc_api_row.elem of cuStreamAddCallback: its function is a stream callback. */
#define SC_HOSTFN_CALLBACK 1
/* At the entry of cuLaunchHostFunc(_ptsz) or cuStreamAddCallback(_ptsz):
 * only edits params, the call's CUPTI-layout parameters, so that the
 * driver runs our trampoline, which records the run and calls the
 * program's function (or, with STREAMCHECK_HOSTFN=marker, enqueues a
 * marker before it). Any backend that calls the driver with the struct's
 * values after its entry hook uses it. */
SC_HIDDEN void sc_hostfn_wrap_params(sc_tstate *ts, CUpti_CallbackId cbid, void *params);
/* At the call's exit: the token its host_func event carries (0: none); ok
 * says the call succeeded (if not, a record made at its entry is freed). */
SC_HIDDEN uint64_t sc_hostfn_enqueued(sc_tstate *ts, int ok);
/* The graph a capture on stream (a normalized handle) is building, 0 if
 * none or the driver does not say (decode_graphs.c). */
SC_HIDDEN uint64_t sc_capturing_graph(uint64_t stream);

/* ---- helpers of several families ---- */

SC_HOT static inline uint64_t norm_stream(CUstream s, int pt) {
    uintptr_t v = (uintptr_t)s;
    if (v == 0) return pt ? 2 : 0; /* _ptsz/_ptds: 0 is the thread's per-thread stream */
    if (v == SC_STREAM_LEGACY) return 0;
    return v;
}

/* Bytes from the first to the last byte a pitched copy touches. */
static inline uint64_t span(uint64_t pitch, uint64_t rows_per_slice, uint64_t width, uint64_t height, uint64_t depth) {
    if (width == 0 || height == 0 || depth == 0) return 0;
    if (pitch < width) pitch = width;
    if (rows_per_slice < height) rows_per_slice = height;
    return pitch * rows_per_slice * (depth - 1) + pitch * (height - 1) + width;
}

/* A copy's or set's op, by whether the call is asynchronous; a synchronous
 * one runs on the legacy (or per-thread) stream. Returns 1. */
static inline int copy_op(const sc_call *c, sc_event *ev) {
    ev->op = c->async ? OP_MEMCPY_ASYNC : OP_MEMCPY;
    if (!c->async) ev->stream = c->pt ? 2 : 0; /* the stream a synchronous copy runs on */
    return 1;
}
static inline int set_op(const sc_call *c, sc_event *ev) {
    ev->op = c->async ? OP_MEMSET_ASYNC : OP_MEMSET;
    if (!c->async) ev->stream = c->pt ? 2 : 0;
    return 1;
}

/* The thread's sc_ext, cleared, as ev's fields 30 on: for the calls that
 * have them (synchronous allocations and frees, pool attributes). */
static inline sc_ext *sc_ext_begin(sc_call *c, sc_event *ev) {
    sc_ext *x = &c->ts->ext;
    memset(x, 0, sizeof *x);
    ev->ext = x;
    return x;
}

/* The host time inside a timed call (sc_drv_info.timed): its entry
 * callback left the clock in CUPTI's correlation data, shared by the
 * call's entry and exit callbacks. 0 when the entry was not seen. */
static inline uint64_t sc_call_dur(const sc_call *c) {
    uint64_t *t0 = c->cb->correlationData;
    if (!t0 || !*t0) return 0;
    int64_t d = sc_now_ns() - (int64_t)*t0;
    *t0 = 0;
    return d > 0 ? (uint64_t)d : 1; /* 0 would say "not recorded" */
}

/* For the decoders of calls that may bring more than one event. */
static inline sc_more *sc_more_begin(sc_call *c) {
    memset(c->more, 0, sizeof *c->more);
    return c->more;
}
static inline int sc_more_result(const sc_more *m) {
    return m->batch.count > 1 || m->nbodies > 1 || m->nops3d > 1 || m->nmemops > 1 || m->memops_after ? 2 : 1;
}

/* decode_copies.c */
SC_HIDDEN void sc_copy3d_read(sc_event *ev, const sc_CUDA_MEMCPY3D *c);
SC_HIDDEN void sc_batch_copy(sc_event *ev, const sc_batch *b, size_t i);
SC_HIDDEN void sc_batch_copy3d(sc_event *ev, const sc_memcpy3d_op *op);
/* decode_memops.c */
SC_HIDDEN void sc_batch_memop(sc_event *ev, const sc_memop_params *ops, unsigned i);
SC_HIDDEN int sc_node_memops(const sc_memop_node_params *np, const sc_memop_params **ops, unsigned *n);
SC_HIDDEN int sc_memop_node(sc_event *ev, const sc_memop_node_params *np, CUgraph graph, const sc_memop_params **ops,
                            unsigned *n);

/* ---- the decoders, by family ---- */

/* decode_streams.c: streams, events and synchronization */
SC_HIDDEN int sc_dec_stream_create(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_stream_create_prio(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_stream_destroy(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_stream_sync(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_stream_query(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_stream_wait(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_host_func(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_event_create(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_event_record(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_event_destroy(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_event_sync(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_event_query(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_ctx_sync(sc_call *c, sc_event *ev); /* cuCtxSynchronize: no parameters */

/* decode_allocs.c: allocations, frees, pools and interprocess handles */
SC_HIDDEN int sc_dec_malloc_async(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_malloc_pool(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_module_global(sc_call *c, sc_event *ev); /* cuModuleGetGlobal_v2, cuLibraryGetGlobal/Managed; elem: FAMILY_MODULE */
SC_HIDDEN int sc_dec_malloc(sc_call *c, sc_event *ev);         /* cuMemAlloc_v2, cuMemAllocManaged; elem: FAMILY_* */
SC_HIDDEN int sc_dec_malloc_pitch(sc_call *c, sc_event *ev);   /* cuMemAllocPitch_v2 */
SC_HIDDEN int sc_dec_malloc_host(sc_call *c, sc_event *ev);    /* cuMemAllocHost_v2, cuMemHostAlloc */
SC_HIDDEN int sc_dec_host_register(sc_call *c, sc_event *ev);  /* cuMemHostRegister(_v2) */
SC_HIDDEN int sc_dec_free_async(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_free(sc_call *c, sc_event *ev);            /* cuMemFree_v2 */
SC_HIDDEN int sc_dec_free_host(sc_call *c, sc_event *ev);       /* cuMemFreeHost, cuMemHostUnregister; elem: FAMILY_* */
SC_HIDDEN int sc_dec_vmm_map(sc_call *c, sc_event *ev);         /* cuMemMap */
SC_HIDDEN int sc_dec_vmm_unmap(sc_call *c, sc_event *ev);       /* cuMemUnmap */
SC_HIDDEN int sc_dec_pool_set_attr(sc_call *c, sc_event *ev);   /* cuMemPoolSetAttribute */
SC_HIDDEN int sc_dec_device_set_pool(sc_call *c, sc_event *ev); /* cuDeviceSetMemPool */
SC_HIDDEN int sc_dec_mem_set_pool(sc_call *c, sc_event *ev);    /* cuMemSetMemPool (CUDA 13): a device's */
SC_HIDDEN int sc_dec_pool_trim(sc_call *c, sc_event *ev);       /* cuMemPoolTrimTo */
SC_HIDDEN int sc_dec_pool_create(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_pool_export(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_pool_import(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_ptr_export(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_ptr_import(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_ipc_event_get(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_ipc_event_open(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_ipc_mem_get(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_ipc_mem_open(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_ipc_mem_close(sc_call *c, sc_event *ev);

/* decode_launches.c: kernel launches, and the calls after which kernel
 * handles may name other kernels */
SC_HIDDEN int sc_dec_launch(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_launch_coop(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_launch_ex(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_unload(sc_call *c, sc_event *ev);

/* decode_copies.c: copies and sets */
SC_HIDDEN int sc_dec_cpy_unified(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_cpy_htod(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_cpy_dtoh(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_cpy_dtod(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_cpy_peer(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_cpy_2d(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_cpy_3d(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_cpy_3dpeer(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_cpy_batch(sc_call *c, sc_event *ev);   /* elem 1: with failIdx (CUDA 12.8), 2: _v2, 3: cuMemcpyWithAttributesAsync */
SC_HIDDEN int sc_dec_cpy_3dbatch(sc_call *c, sc_event *ev); /* elem 1: with failIdx, 2: _v2, 3: cuMemcpy3DWithAttributesAsync */
SC_HIDDEN int sc_dec_set(sc_call *c, sc_event *ev);   /* elem: the element size */
SC_HIDDEN int sc_dec_set2d(sc_call *c, sc_event *ev); /* elem: the element size */

/* decode_layouts.c: decoders chosen by the parameters' layout alone; the
 * row's elem is the op (ops.h) they record, so a call of a known layout
 * needs a table row and no decoder of its own */
/* (CUdeviceptr ptr, size_t bytes, ..., CUstream hStream): a use of [ptr, ptr + bytes) on the stream, the last
 * parameter; for an op whose spec row is a MemUse of ptr, on its stream */
SC_HIDDEN int sc_dec_range_on_stream(sc_call *c, sc_event *ev);

/* decode_memops.c: stream memory operations */
SC_HIDDEN int sc_dec_stream_memop(sc_call *c, sc_event *ev); /* elem: the SC_MEMOP_* kind, 0 for cuStreamBatchMemOp */

/* decode_graphs.c: capture, graphs and executable graphs */
SC_HIDDEN int sc_dec_capture_begin(sc_call *c, sc_event *ev); /* elem 1: into the graph it names */
SC_HIDDEN int sc_dec_capture_end(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_graph_launch(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_graph_instantiate(sc_call *c, sc_event *ev); /* (CUgraphExec *phGraphExec, CUgraph hGraph, ...) */
SC_HIDDEN int sc_dec_graph_exec_update(sc_call *c, sc_event *ev); /* (CUgraphExec hGraphExec, CUgraph hGraph, ...) */
SC_HIDDEN int sc_dec_graph_alloc(sc_call *c, sc_event *ev);      /* cuGraphAddMemAllocNode */
SC_HIDDEN int sc_dec_graph_node(sc_call *c, sc_event *ev);       /* cuGraphAddNode: a node by its type */
SC_HIDDEN int sc_dec_graph_node_v2(sc_call *c, sc_event *ev);    /* cuGraphAddNode_v2 (edge data) */
SC_HIDDEN int sc_dec_graph_kernel_node(sc_call *c, sc_event *ev); /* elem 1: v1 parameters (no kern), 2: _v2 */
SC_HIDDEN int sc_dec_graph_memcpy_node(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_graph_memset_node(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_graph_memop_node(sc_call *c, sc_event *ev); /* cuGraphAddBatchMemOpNode */
SC_HIDDEN int sc_dec_graph_clone(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_graph_child(sc_call *c, sc_event *ev);      /* cuGraphAddChildGraphNode */
SC_HIDDEN int sc_dec_graph_event_node(sc_call *c, sc_event *ev); /* cuGraphAddEvent{Record,Wait}Node; elem EVNODE_* */
SC_HIDDEN int sc_dec_graph_node_set_event(sc_call *c, sc_event *ev); /* cuGraphEvent{Record,Wait}NodeSetEvent */
SC_HIDDEN int sc_dec_graph_exec_set_event(sc_call *c, sc_event *ev); /* cuGraphExecEvent{Record,Wait}NodeSetEvent */
/* cuGraphNodeSetParams: an event node's new event, else FORGET_ALL_GRAPHS */
SC_HIDDEN int sc_dec_graph_node_set_params(sc_call *c, sc_event *ev);
/* cuGraphExecNodeSetParams: the same on an executable graph, else FORGET_EXEC (FORGET_EXEC_CHILD for a child
 * graph node) */
SC_HIDDEN int sc_dec_graph_exec_set_params(sc_call *c, sc_event *ev);
SC_HIDDEN int sc_dec_graph_forget(sc_call *c, sc_event *ev); /* a graph's work changes; elem FORGET_*: where the handle is */

/* sc_dec_graph_*event*: which kind of event node. */
enum { EVNODE_RECORD = 1, EVNODE_WAIT };

/* sc_dec_graph_forget: where the call names the graph whose work changes. */
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

#endif
