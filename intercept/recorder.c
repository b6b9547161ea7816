//go:build ignore

/*
 * recorder.c: the layer both backends feed (CUPTI's callbacks, callbacks.c;
 * the interposed wrappers, interpose.c), and NCCL's wrappers and the host
 * function trampolines beside them: the per-call path that turns a driver
 * call into events, the per-thread state it keeps, and the decisions about
 * streams that events imply. It hands finished events to the writer
 * (tracefile.c), which only writes.
 *
 * Events are recorded at a driver call's exit, where the result and the
 * returned handles and pointers are known. The call's row of the table
 * (apitable.c) names the decoder that reads its parameters (decode_*.c);
 * this file adds what every event carries and writes it.
 *
 * The path is plain C with no allocation after a thread's first call: a
 * reentrancy flag, a few table reads, the unwind, and one locked append.
 *
 * Layers, lowest first: the writer; the definition tables that write
 * through it (strings, modules, stacks); the allocation map and the other
 * per-process state; this recorder; the backends. Each calls only the
 * layers below it; the writer reaches the layers above only through the
 * hooks registered here (sc_recorder_init).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "decode.h"

_Atomic int sc_active;
int sc_callback_only;
/* With STREAMCHECK_STATS=1, time each phase of a handled call. */
static inline void phase_done(int phase, int64_t *t) {
    if (!sc_stats) return;
    int64_t now = sc_stat_clock();
    atomic_fetch_add_explicit(&sc_stat_phase_time[phase], (uint64_t)(now - *t), memory_order_relaxed);
    *t = now;
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
    munmap(p, sizeof(sc_tstate));
}
static void tkey_init(void) { tkey_ok = pthread_key_create(&tkey, tstate_free) == 0; }

SC_HOT sc_tstate *sc_tls(void) {
    sc_tstate *ts = tls;
    uint32_t gen = atomic_load_explicit(&sc_fork_gen, memory_order_relaxed);
    if (!ts) {
        pthread_once(&tkey_once, tkey_init);
        /* Mapped, not allocated: most of its 110 KiB (room for a launch's
         * 4096 addresses, their sort, the longest event) is never touched
         * and so never resident; calloc would zero it all (bench/README.md,
         * shim memory). */
        void *m = mmap(NULL, sizeof *ts, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return NULL;
        ts = m;
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

/* ---- the per-call path ---- */

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

/* Zeroes e with plain 16-byte stores: GCC compiles a memset of this size
 * (and a loop of stores) into "rep stos", whose start-up cost was the
 * largest single cost of a recorded call in the fake app's loop. */
static inline void event_clear(sc_event *e) {
    typedef uint64_t u64x2 __attribute__((vector_size(16), may_alias, aligned(8)));
    _Static_assert(sizeof(sc_event) == 160, "event_clear covers every byte of sc_event");
    u64x2 *v = (u64x2 *)e, z = {0, 0};
    v[0] = z, v[1] = z, v[2] = z, v[3] = z, v[4] = z, v[5] = z, v[6] = z, v[7] = z, v[8] = z, v[9] = z;
}

/* Writes the events of a call after its first (a decoder's c->more). */
SC_COLD static void emit_more(sc_tstate *ts, sc_event *ev, const sc_more *m) {
    for (size_t i = 1; i < m->batch.count; i++) { /* a batch's other copies */
        sc_batch_copy(ev, &m->batch, i);
        sc_emit(ts, ev);
    }
    for (unsigned i = 1; i < m->nbodies; i++) { /* a conditional node's other bodies */
        ev->src = (uint64_t)(uintptr_t)m->bodies[i];
        sc_emit(ts, ev);
    }
    for (size_t i = 1; i < m->nops3d; i++) { /* a 3D batch's other copies */
        sc_batch_copy3d(ev, &m->ops3d[i]);
        sc_emit(ts, ev);
    }
    if (m->memops_after) { /* a node's new operations: made at its graph's launches, graph not named */
        ev->op = OP_STREAM_MEMOP;
        ev->flags = FLAG_GRAPH_NODE;
        ev->graph = SC_ALL_GRAPHS;
        ev->exec = ev->node = ev->src = 0;
        sc_batch_memop(ev, m->memops, 0);
        sc_emit(ts, ev);
    }
    for (unsigned i = 1; i < m->nmemops; i++) { /* a batch's other memory operations */
        sc_batch_memop(ev, m->memops, i);
        sc_emit(ts, ev);
    }
}

SC_HOT static void handle_driver(sc_tstate *ts, CUpti_CallbackId cbid, const sc_CUpti_CallbackData *cb) {
    sc_drv_info in = sc_drv_calls[cbid];
    const void *pp = cb->functionParams;
    if (!in.decode || (!pp && in.decode != sc_dec_ctx_sync)) return; /* cuCtxSynchronize has no parameters */
    sc_event ev;
    event_clear(&ev);
    ev.result = cb->functionReturnValue ? *(const CUresult *)cb->functionReturnValue : 0;
    sc_more more; /* what a decoder that returns 2 fills in */
    sc_call c = {ts, cb, pp, ev.result == CUDA_SUCCESS, in.async, in.elem, in.pt, in.psize, -1, 0, &more};
    int64_t t = sc_stats ? sc_stat_clock() : 0;

    ev.device = device_of(ts, cb->context); /* a decoder may name another (cuDeviceSetMemPool's) */
    int n = in.decode(&c, &ev);
    if (!n || !ev.op) return;

    if (ev.flags & FLAG_PEER) {
        /* cuMemcpyPeer is serialized with all work of the current device and
         * of both sides' devices: the analyzer needs to know which. */
        ev.peer_src = device_of_ptr(ev.src, ev.device);
        ev.peer_dst = device_of_ptr(ev.ptr, ev.device);
    }
    /* API name: the runtime function in progress on this thread, if any. */
    uint32_t sid;
    if (ts->api_sid) { /* inside ncclMemAlloc or ncclMemFree (nccl.c) */
        sid = ts->api_sid;
    } else if (ts->rt_depth > 0 && ts->rt_cbid < MAXCB && sc_rt_disp[ts->rt_cbid]) {
        sid = atomic_load_explicit(&sc_rt_sid[ts->rt_cbid], memory_order_relaxed);
        if (!sid) atomic_store(&sc_rt_sid[ts->rt_cbid], sid = sc_intern(sc_rt_disp[ts->rt_cbid]));
    } else {
        sid = atomic_load_explicit(&sc_drv_sid[cbid], memory_order_relaxed);
        if (!sid) atomic_store(&sc_drv_sid[cbid], sid = sc_intern(sc_drv_disp[cbid]));
    }
    ev.api = sid;
    ev.ptrs = ts->ptrs;
    phase_done(SC_PHASE_DECODE, &t);
    ev.stack = sc_stack_capture(ts);
    phase_done(SC_PHASE_STACK, &t);
    /* What we got may have been released by another thread a moment ago:
     * its free or destroy goes in the trace first. */
    int ok = c.ok;
    if (ok && c.alloc_add >= 0)
        sc_release_wait(ts, SC_REL_MEMORY, ev.ptr, sc_range_end(ev.ptr, ev.size));
    else if (ok && ev.op == OP_STREAM_CREATE && ev.stream)
        sc_release_wait(ts, SC_REL_STREAM, ev.stream, ev.stream + 1);
    else if (ok && (ev.op == OP_EVENT_CREATE || ev.op == OP_IPC_EVENT_OPEN) && ev.event)
        sc_release_wait(ts, SC_REL_EVENT, ev.event, ev.event + 1);
    sc_emit(ts, &ev);
    if (n == 2) emit_more(ts, &ev, &more);
    phase_done(SC_PHASE_EMIT, &t);
    if (c.alloc_add >= 0) sc_alloc_add((uint64_t)c.alloc_add, ev.size, ev.ext && ev.ext->family >= FAMILY_HOST);
    if (c.alloc_free) {
        if (ev.op != OP_VMM_UNMAP)
            sc_alloc_free(c.alloc_free);
        else
            sc_alloc_free_range(c.alloc_free, sc_range_end(ev.ptr, ev.size));
    }
    phase_done(SC_PHASE_MAP, &t);
}

/* At the entry of a free or destroy: what it gives back (releases.c). */
SC_HOT static inline __attribute__((always_inline)) void announce_release(sc_tstate *ts, CUpti_CallbackId cbid,
                                                                       const sc_CUpti_CallbackData *cb) {
    const void *pp = cb->functionParams;
    if (!pp) return;
    uint64_t v = 0;
    uint8_t rel = sc_drv_calls[cbid].release;
    switch (rel) { /* the first parameter of cuMemFree, cuMemFreeAsync, cuMemFreeHost, cuMemHostUnregister,
                    * cuIpcCloseMemHandle, cuStreamDestroy, cuEventDestroy */
    case SC_REL_MEMORY: v = ((const p_cuMemFree *)pp)->dptr; break;
    case SC_REL_UNMAP: { /* cuMemUnmap: the range it names, which may hold several mappings */
        const p_cuMemUnmap *u = pp;
        if (u->ptr) sc_release_begin(ts, SC_REL_MEMORY, u->ptr, sc_range_end(u->ptr, u->size));
        return;
    }
    case SC_REL_STREAM: v = (uint64_t)(uintptr_t)((const p_stream_first *)pp)->hStream; break;
    case SC_REL_EVENT: v = (uint64_t)(uintptr_t)((const p_event_first *)pp)->hEvent; break;
    }
    if (v) sc_release_begin(ts, rel, v, rel == SC_REL_MEMORY ? sc_alloc_end_of(v) : v + 1);
}

/* At the entry of a timed call (a synchronous allocation or free): a
 * free's announcement, then the clock, for sc_call_dur at its exit. */
SC_COLD static void timed_entry(sc_tstate *ts, CUpti_CallbackId cbid, const sc_CUpti_CallbackData *cb) {
    ts->busy = 1;
    announce_release(ts, cbid, cb);
    ts->busy = 0;
    /* Last, so that the time inside the call leaves our own out. */
    if (cb->correlationData) *cb->correlationData = (uint64_t)sc_now_ns();
}

SC_HOT void sc_call_enter(sc_tstate *ts, uint32_t id, const sc_CUpti_CallbackData *cb) {
    if (sc_drv_calls[id].timed) {
        timed_entry(ts, id, cb);
    } else if (sc_drv_calls[id].hostfn) {
        /* The parameters the driver is then called with name our trampoline
         * (hostfn.c): CUPTI calls the driver with the struct it hands us, the
         * interposed wrappers with the struct they built. */
        ts->busy = 1; /* a marker's enqueue re-enters the callback, or the wrappers */
        sc_hostfn_wrap_params(ts, id, (void *)cb->functionParams);
        ts->busy = 0;
    } else {
        ts->busy = 1;
        announce_release(ts, id, cb);
        ts->busy = 0;
    }
}

SC_HOT void sc_call_exit(sc_tstate *ts, uint32_t id, const sc_CUpti_CallbackData *cb) {
    ts->busy = 1; /* the driver calls we make re-enter the callback, or the wrappers */
    if (sc_stats) {
        int64_t t0 = sc_stat_clock();
        handle_driver(ts, id, cb);
        atomic_fetch_add_explicit(&sc_stat_handler_time, (uint64_t)(sc_stat_clock() - t0), memory_order_relaxed);
        atomic_fetch_add_explicit(&sc_stat_handled, 1, memory_order_relaxed);
    } else {
        handle_driver(ts, id, cb);
    }
    if (sc_drv_calls[id].release) sc_release_end(ts); /* recorded (or nothing to record) */
    ts->busy = 0;
}

/* ---- streams seen created (explicitly or implicitly) ---- */

static lfmap streams;

SC_HOT static int stream_known(uint64_t h) {
    uint64_t v;
    return lfmap_get(&streams, h, &v);
}

/* A forked child's trace starts afresh: streams its parent created are
 * implicit there. (The child has one thread: no reader of the old table.) */
static void streams_forget(void) { lfmap_clear_locked(&streams); }

SC_HOT void sc_emit(sc_tstate *ts, sc_event *ev) {
    int implicit = 0;
    unsigned int sflags = 0;
    int sprio = 0;
    if (ev->result == CUDA_SUCCESS && ev->stream > 2 && ev->op != OP_STREAM_CREATE && !stream_known(ev->stream)) {
        implicit = 1;
        /* Ask the driver outside sc_lock: it may take its own locks. Not
         * about a stream just destroyed: its handle is gone (and with no
         * work recorded on it, its flags change nothing). */
        if (ev->op != OP_STREAM_DESTROY) {
            if (sc_drv.cuStreamGetFlags) sc_drv.cuStreamGetFlags((CUstream)(uintptr_t)ev->stream, &sflags);
            if (sc_drv.cuStreamGetPriority) sc_drv.cuStreamGetPriority((CUstream)(uintptr_t)ev->stream, &sprio);
        }
    }
    size_t tlen = sc_event_encode(ts->payload, ev);

    sc_lock_acquire();
    if (!sc_trace_writable_locked()) {
        sc_events_dropped_locked(1 + (implicit ? 1 : 0));
        sc_lock_release();
        return;
    }
    /* Checked again under the lock: another thread may have written the
     * create since, and the create goes right before the event. */
    if (implicit && !stream_known(ev->stream)) {
        sc_event c = {.op = OP_STREAM_CREATE,
                      .device = ev->device,
                      .stream = ev->stream,
                      .flags = FLAG_IMPLICIT | ((sflags & CU_STREAM_NON_BLOCKING) ? FLAG_NON_BLOCKING : 0),
                      .prio = sprio};
        uint8_t ctail[128];
        sc_event_append_locked(&c, ts->tid, ctail, sc_event_encode(ctail, &c));
        lfmap_put_locked(&streams, ev->stream, 1);
    }
    sc_event_append_locked(ev, ts->tid, ts->payload, tlen);
    if (ev->result == CUDA_SUCCESS) {
        if (ev->op == OP_STREAM_CREATE && ev->stream > 2) lfmap_put_locked(&streams, ev->stream, 1);
        if (ev->op == OP_STREAM_DESTROY) lfmap_del_locked(&streams, ev->stream);
    }
    sc_lock_release();
}

/* ---- the top of a new trace file ---- */

/* The Process record: who writes this file, which backend records. */
static void write_process_locked(void) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    uint32_t exe_id = sc_intern_locked(exe, strlen(exe));
    char ver[128]; /* and which backend records: "streamcheck-intercept 0.2.0 (trace format 1; backend cupti)" */
    int nv = snprintf(ver, sizeof ver, "%.*s; backend %s)", (int)strlen(SC_VERSION) - 1, SC_VERSION,
                      sc_backend ? sc_backend : "cupti");
    uint32_t ver_id = sc_intern_locked(ver, nv > 0 && (size_t)nv < sizeof ver ? (size_t)nv : strlen(ver));
    /* The command line names the script of an interpreter (python3 train.py). */
    char args[1024];
    size_t na = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t r = read(fd, args, sizeof args - 1);
        na = r > 0 ? (size_t)r : 0;
        close(fd);
    }
    while (na > 0 && args[na - 1] == 0) na--; /* the last argument's NUL */
    for (size_t i = 0; i < na; i++)
        if (args[i] == 0) args[i] = ' ';
    uint32_t args_id = sc_intern_locked(args, na);
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    uint8_t buf[80];
    size_t k = 0;
    k += sc_put_uvarint(buf + k, (uint64_t)getpid());
    k += sc_put_uvarint(buf + k, (uint64_t)getppid());
    k += sc_put_uvarint(buf + k, exe_id);
    k += sc_put_svarint(buf + k, (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec);
    k += sc_put_uvarint(buf + k, ver_id);
    k += sc_put_uvarint(buf + k, args_id);
    sc_append_locked(REC_PROCESS, buf, k, NULL, 0);
}

static const sc_writer_hooks recorder_hooks = {.opened_locked = write_process_locked, .fork_child = streams_forget};

/* Every layer's hooks, in the order the writer runs them: strings are
 * defined before the Process record and the modules that name them, and
 * modules before the stacks whose frames name them. */
void sc_recorder_init(void) {
    static const sc_writer_hooks *const layers[] = {&sc_strings_hooks,  &recorder_hooks,    &sc_modules_hooks,
                                                    &sc_stacks_hooks,   &sc_allocmap_hooks, &sc_pytramp_hooks,
                                                    &sc_releases_hooks};
    _Static_assert(sizeof layers / sizeof layers[0] <= SC_MAX_WRITER_HOOKS, "room for every layer's hooks");
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) sc_writer_register(layers[i]);
}
