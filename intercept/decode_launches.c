//go:build ignore

/*
 * decode_launches.c: the decoders of kernel launches, whose device
 * addresses the parameter scan finds (params.c), and of the calls after
 * which a kernel handle may name another kernel (decode.h).
 */
#include "decode.h"

SC_HOT int sc_dec_launch(sc_call *c, sc_event *ev) {
    const p_cuLaunchKernel *p = c->pp;
    ev->op = OP_LAUNCH;
    ev->stream = norm_stream(p->hStream, c->pt);
    sc_launch_scan(c->ts, p->f, c->cb->symbolName, p->kernelParams, p->extra, ev);
    return 1;
}

SC_HOT int sc_dec_launch_coop(sc_call *c, sc_event *ev) {
    const p_cuLaunchCooperativeKernel *p = c->pp;
    ev->op = OP_LAUNCH;
    ev->stream = norm_stream(p->hStream, c->pt);
    sc_launch_scan(c->ts, p->f, c->cb->symbolName, p->kernelParams, NULL, ev);
    return 1;
}

SC_HOT int sc_dec_launch_ex(sc_call *c, sc_event *ev) {
    const p_cuLaunchKernelEx *p = c->pp;
    ev->op = OP_LAUNCH;
    ev->stream = norm_stream(p->config ? p->config->hStream : NULL, c->pt);
    sc_launch_scan(c->ts, p->f, c->cb->symbolName, p->kernelParams, p->extra, ev);
    return 1;
}

/* No event: kernel handles may be reused after it (params.c). */
SC_COLD int sc_dec_unload(sc_call *c, sc_event *ev) {
    if (c->ok) sc_layouts_forget();
    return 0;
}
