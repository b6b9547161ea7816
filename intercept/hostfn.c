//go:build ignore

/*
 * hostfn.c: host functions that ran.
 *
 * A host function (cuLaunchHostFunc, cuStreamAddCallback) starts only once
 * all work issued to its stream before it completed; programs rely on
 * that (XLA's stream executor tells the thread that frees a buffer from a
 * host function). The enqueue is recorded at its exit as a host_func
 * event; this file makes the run recorded too, as an OP_HOST_FN_RUN event
 * written on the thread that runs the function as it starts, carrying the
 * token the host_func event carries.
 *
 * By default the entry of the call rewrites the function and its argument
 * in the call's parameters (sc_hostfn_wrap_params, which only edits the
 * CUPTI-layout struct, so an interposing backend can call it as well) to a
 * trampoline of ours and a small heap record holding the program's
 * function, its argument and the token. The trampoline records the run and
 * then calls the program's function with its argument (a stream callback
 * with its stream and status too). A driver that does not honour the
 * rewrite runs the program's function as it was: nothing breaks, the run
 * is simply not recorded, and records stop being made once
 * SC_HOSTFN_MAX_PENDING are waiting, so the leak is bounded.
 *
 * STREAMCHECK_HOSTFN=marker enqueues a marker host function of ours on the
 * same stream just before the program's (a driver call from inside the
 * callback, which the reentrancy guard keeps out of the trace) instead of
 * rewriting anything; it records the run of the program's function as it
 * starts, since host functions of one stream run in order. The marker is
 * not put into a stream being captured: that would change the program's
 * graph. STREAMCHECK_HOSTFN=off records no runs.
 *
 * During a capture the host function becomes a graph node that runs at
 * each launch: its record is kept, not freed after a run (at most
 * SC_HOSTFN_MAX_KEPT of them).
 */
#include <stdlib.h>
#include <string.h>

#include "decode.h"

enum { HOSTFN_WRAP, HOSTFN_MARKER, HOSTFN_OFF };
int sc_hostfn_mode = HOSTFN_WRAP;

#define SC_HOSTFN_MAX_PENDING 65536 /* records waiting for a run, not captured */
#define SC_HOSTFN_MAX_KEPT 4096     /* records of captured host functions, kept for good */

typedef struct {
    void (*fn)(void *);                       /* the program's cuLaunchHostFunc function, or NULL */
    void (*cb)(CUstream, CUresult, void *);  /* the program's cuStreamAddCallback callback, or NULL */
    void *ud;                                 /* the program's argument */
    uint64_t token;
    int32_t device;
    uint8_t keep;                             /* captured: runs at each launch of the graph */
} hostfn_rec;

static _Atomic uint64_t next_token;
static _Atomic int64_t pending, kept;
_Atomic uint64_t sc_stat_hostfn_wrapped, sc_stat_hostfn_ran;

void sc_hostfn_init(void) {
    const char *m = getenv("STREAMCHECK_HOSTFN");
    if (m && strcmp(m, "marker") == 0)
        sc_hostfn_mode = HOSTFN_MARKER;
    else if (m && strcmp(m, "off") == 0)
        sc_hostfn_mode = HOSTFN_OFF;
    else
        sc_hostfn_mode = HOSTFN_WRAP;
}

/* Writes the run of the host function of r, on the calling thread. */
static void record_run(const hostfn_rec *r) {
    atomic_fetch_add_explicit(&sc_stat_hostfn_ran, 1, memory_order_relaxed);
    if (!atomic_load_explicit(&sc_active, memory_order_relaxed) || sc_callback_only ||
        atomic_load_explicit(&sc_trace_failed, memory_order_relaxed))
        return;
    sc_tstate *ts = sc_tls();
    if (!ts || ts->busy) return;
    static _Atomic uint32_t api_sid;
    uint32_t sid = atomic_load_explicit(&api_sid, memory_order_relaxed);
    if (!sid) atomic_store(&api_sid, sid = sc_intern("host function"));
    ts->busy = 1;
    sc_event ev;
    memset(&ev, 0, sizeof ev);
    ev.op = OP_HOST_FN_RUN;
    ev.device = r->device;
    ev.api = sid;
    ev.value = r->token;
    sc_emit(ts, &ev);
    ts->busy = 0;
}

/* A record done with after a run: freed unless its graph may run it again. */
static void run_done(hostfn_rec *r) {
    if (r->keep) return;
    atomic_fetch_sub_explicit(&pending, 1, memory_order_relaxed);
    free(r);
}

/* The trampolines the driver calls instead of the program's function. */
static void tramp_fn(void *p) {
    hostfn_rec *r = p;
    void (*fn)(void *) = r->fn;
    void *ud = r->ud;
    record_run(r);
    run_done(r);
    fn(ud);
}

static void tramp_cb(CUstream s, CUresult status, void *p) {
    hostfn_rec *r = p;
    void (*cb)(CUstream, CUresult, void *) = r->cb;
    void *ud = r->ud;
    record_run(r);
    run_done(r);
    cb(s, status, ud);
}

/* The marker host function: the program's own runs right after it. */
static void marker_fn(void *p) {
    hostfn_rec *r = p;
    record_run(r);
    run_done(r);
}

/* A new record, or NULL when too many wait (a driver that does not run our
 * trampolines) or no memory. */
static hostfn_rec *new_rec(sc_tstate *ts, int captured) {
    _Atomic int64_t *count = captured ? &kept : &pending;
    int64_t limit = captured ? SC_HOSTFN_MAX_KEPT : SC_HOSTFN_MAX_PENDING;
    if (atomic_fetch_add_explicit(count, 1, memory_order_relaxed) >= limit) {
        atomic_fetch_sub_explicit(count, 1, memory_order_relaxed);
        return NULL;
    }
    hostfn_rec *r = calloc(1, sizeof *r);
    if (!r) {
        atomic_fetch_sub_explicit(count, 1, memory_order_relaxed);
        return NULL;
    }
    r->token = atomic_fetch_add_explicit(&next_token, 1, memory_order_relaxed) + 1;
    r->device = ts->ctx_valid ? ts->ctx_dev : -1;
    r->keep = (uint8_t)captured;
    return r;
}

void sc_hostfn_wrap_params(sc_tstate *ts, CUpti_CallbackId cbid, void *params) {
    ts->hostfn_token = 0;
    ts->hostfn_rec = NULL;
    if (!params || cbid >= MAXCB || sc_hostfn_mode == HOSTFN_OFF) return;
    sc_drv_info in = sc_drv_calls[cbid];
    p_cuLaunchHostFunc *p = params; /* cuStreamAddCallback's starts the same way */
    if (!p->fn) return;             /* the driver rejects it: nothing will run */
    CUstream s = p->hStream;
    if (!s && in.pt) s = (CUstream)(uintptr_t)SC_STREAM_PER_THREAD;
    int captured = sc_capturing_graph((uint64_t)(uintptr_t)s) != 0;
    if (sc_hostfn_mode == HOSTFN_MARKER) {
        if (captured || !sc_drv.cuLaunchHostFunc) return;
        hostfn_rec *r = new_rec(ts, 0);
        if (!r) return;
        if (sc_drv.cuLaunchHostFunc(s, marker_fn, r) != CUDA_SUCCESS) {
            atomic_fetch_sub_explicit(&pending, 1, memory_order_relaxed);
            free(r);
            return;
        }
        atomic_fetch_add_explicit(&sc_stat_hostfn_wrapped, 1, memory_order_relaxed);
        ts->hostfn_token = r->token; /* the marker owns r now */
        return;
    }
    hostfn_rec *r = new_rec(ts, captured);
    if (!r) return;
    r->ud = p->userData;
    if (in.elem == SC_HOSTFN_CALLBACK) {
        r->cb = (void (*)(CUstream, CUresult, void *))p->fn;
        p->fn = (void *)tramp_cb;
    } else {
        r->fn = (void (*)(void *))p->fn;
        p->fn = (void *)tramp_fn;
    }
    p->userData = r;
    atomic_fetch_add_explicit(&sc_stat_hostfn_wrapped, 1, memory_order_relaxed);
    ts->hostfn_token = r->token;
    ts->hostfn_rec = r;
}

uint64_t sc_hostfn_enqueued(sc_tstate *ts, int ok) {
    uint64_t token = ts->hostfn_token;
    hostfn_rec *r = ts->hostfn_rec;
    ts->hostfn_token = 0;
    ts->hostfn_rec = NULL;
    if (ok) return token;
    if (r) {
        /* Rejected: the driver will not run the trampoline. */
        atomic_fetch_sub_explicit(r->keep ? &kept : &pending, 1, memory_order_relaxed);
        free(r);
    }
    return 0; /* a marker enqueued before a rejected call records a run no enqueue has */
}
