//go:build ignore

/*
 * decode_layouts.c: decoders chosen by the layout of a call's parameters
 * alone. The table row (drvcalls.h) names the op to record in its elem
 * column, and the size of the parameters' struct (sc_call.psize) places
 * their last parameter, so a call of a layout decoded here needs a table
 * row and no decoder of its own.
 */
#include "decode.h"

SC_COLD int sc_dec_range_on_stream(sc_call *c, sc_event *ev) {
    const unsigned char *p = c->pp;
    CUdeviceptr ptr;
    size_t bytes;
    CUstream s;
    if (c->psize < sizeof ptr + sizeof bytes + sizeof s) return 0; /* not this layout: nothing to record */
    memcpy(&ptr, p, sizeof ptr);
    memcpy(&bytes, p + sizeof ptr, sizeof bytes);
    memcpy(&s, p + c->psize - sizeof s, sizeof s); /* pointer-aligned and last: no padding after it */
    ev->op = c->elem;
    ev->ptr = ptr;
    ev->size = bytes;
    ev->stream = norm_stream(s, c->pt);
    return 1;
}
