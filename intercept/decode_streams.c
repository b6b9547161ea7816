//go:build ignore

/*
 * decode_streams.c: the decoders of streams, events and synchronization
 * (decode.h).
 */
#include "decode.h"

SC_COLD int sc_dec_stream_create(sc_call *c, sc_event *ev) {
    const p_cuStreamCreate *p = c->pp;
    ev->op = OP_STREAM_CREATE;
    if (c->ok && p->phStream) ev->stream = (uint64_t)(uintptr_t)*p->phStream;
    if (p->Flags & CU_STREAM_NON_BLOCKING) ev->flags |= FLAG_NON_BLOCKING;
    return 1;
}

SC_COLD int sc_dec_stream_create_prio(sc_call *c, sc_event *ev) {
    const p_cuStreamCreateWithPriority *p = c->pp;
    ev->op = OP_STREAM_CREATE;
    if (c->ok && p->phStream) ev->stream = (uint64_t)(uintptr_t)*p->phStream;
    if (p->flags & CU_STREAM_NON_BLOCKING) ev->flags |= FLAG_NON_BLOCKING;
    ev->prio = p->priority;
    return 1;
}

SC_COLD int sc_dec_stream_destroy(sc_call *c, sc_event *ev) {
    ev->op = OP_STREAM_DESTROY;
    ev->stream = norm_stream(((const p_stream_first *)c->pp)->hStream, c->pt);
    return 1;
}

SC_HOT int sc_dec_stream_sync(sc_call *c, sc_event *ev) {
    ev->op = OP_STREAM_SYNC;
    ev->stream = norm_stream(((const p_stream_first *)c->pp)->hStream, c->pt);
    return 1;
}

SC_HOT int sc_dec_stream_query(sc_call *c, sc_event *ev) {
    ev->op = OP_STREAM_QUERY;
    ev->stream = norm_stream(((const p_stream_first *)c->pp)->hStream, c->pt);
    return 1;
}

SC_HOT int sc_dec_stream_wait(sc_call *c, sc_event *ev) {
    const p_cuStreamWaitEvent *p = c->pp;
    ev->op = OP_STREAM_WAIT;
    ev->stream = norm_stream(p->hStream, c->pt);
    ev->event = (uint64_t)(uintptr_t)p->hEvent;
    if (p->Flags & SC_EVENT_WAIT_EXTERNAL) ev->flags |= FLAG_EXTERNAL;
    return 1;
}

SC_HOT int sc_dec_host_func(sc_call *c, sc_event *ev) {
    ev->op = OP_HOST_FUNC;
    ev->stream = norm_stream(((const p_cuLaunchHostFunc *)c->pp)->hStream, c->pt);
    ev->value = sc_hostfn_enqueued(c->ts, c->ok); /* the token its run's record carries (hostfn.c) */
    return 1;
}

SC_COLD int sc_dec_event_create(sc_call *c, sc_event *ev) {
    const p_cuEventCreate *p = c->pp;
    ev->op = OP_EVENT_CREATE;
    if (c->ok && p->phEvent) ev->event = (uint64_t)(uintptr_t) * (CUevent *)p->phEvent;
    return 1;
}

SC_HOT int sc_dec_event_record(sc_call *c, sc_event *ev) {
    const p_cuEventRecord *p = c->pp;
    ev->op = OP_EVENT_RECORD;
    ev->event = (uint64_t)(uintptr_t)p->hEvent;
    ev->stream = norm_stream(p->hStream, c->pt);
    if (c->elem == 1 && (((const p_cuEventRecordWithFlags *)c->pp)->flags & SC_EVENT_RECORD_EXTERNAL))
        ev->flags |= FLAG_EXTERNAL;
    return 1;
}

SC_COLD int sc_dec_event_destroy(sc_call *c, sc_event *ev) {
    ev->op = OP_EVENT_DESTROY;
    ev->event = (uint64_t)(uintptr_t)((const p_event_first *)c->pp)->hEvent;
    return 1;
}

SC_HOT int sc_dec_event_sync(sc_call *c, sc_event *ev) {
    ev->op = OP_EVENT_SYNC;
    ev->event = (uint64_t)(uintptr_t)((const p_event_first *)c->pp)->hEvent;
    return 1;
}

SC_HOT int sc_dec_event_query(sc_call *c, sc_event *ev) {
    ev->op = OP_EVENT_QUERY;
    ev->event = (uint64_t)(uintptr_t)((const p_event_first *)c->pp)->hEvent;
    return 1;
}

SC_HOT int sc_dec_ctx_sync(sc_call *c, sc_event *ev) {
    ev->op = OP_DEVICE_SYNC;
    return 1;
}
