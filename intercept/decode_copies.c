//go:build ignore

/*
 * decode_copies.c: the decoders of copies and sets (decode.h): 1D, 2D, 3D
 * and peer copies, the batches of cuMemcpyBatchAsync and
 * cuMemcpy3DBatchAsync (one event a copy), and memsets. Which side of a
 * copy is device memory, and whether host memory is pinned, the driver
 * says (cuPointerGetAttribute) where the call does not.
 */
#include "decode.h"

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
    switch (sc_alloc_contains(p)) {
    case SC_ALLOC_DEVICE: return 1;
    case SC_ALLOC_HOST: /* recorded pinned or registered host memory */
        *flags |= FLAG_PINNED;
        return 0;
    }
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

/* Reads a copy node's CUDA_MEMCPY3D (decode_graphs.c). */
void sc_copy3d_read(sc_event *ev, const sc_CUDA_MEMCPY3D *c) { READ_COPY3D(c, ev); }

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
void sc_batch_copy(sc_event *ev, const sc_batch *b, size_t i) {
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
void sc_batch_copy3d(sc_event *ev, const sc_memcpy3d_op *op) {
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


/* ---- the decoders ---- */

SC_HOT int sc_dec_cpy_unified(sc_call *c, sc_event *ev) {
    const p_cuMemcpy *p = c->pp;
    unified_copy(ev, p->dst, p->src, p->ByteCount);
    if (c->async) ev->stream = norm_stream(p->hStream, c->pt);
    return copy_op(c, ev);
}

SC_HOT int sc_dec_cpy_htod(sc_call *c, sc_event *ev) {
    const p_cuMemcpyHtoD *p = c->pp;
    ev->ptr = p->dstDevice;
    ev->src = (uint64_t)(uintptr_t)p->srcHost;
    ev->size = p->ByteCount;
    ev->kind = COPY_H2D;
    ev->flags = host_flags(p->srcHost);
    if (c->async) ev->stream = norm_stream(p->hStream, c->pt);
    return copy_op(c, ev);
}

SC_HOT int sc_dec_cpy_dtoh(sc_call *c, sc_event *ev) {
    const p_cuMemcpyDtoH *p = c->pp;
    ev->ptr = (uint64_t)(uintptr_t)p->dstHost;
    ev->src = p->srcDevice;
    ev->size = p->ByteCount;
    ev->kind = COPY_D2H;
    ev->flags = host_flags(p->dstHost);
    if (c->async) ev->stream = norm_stream(p->hStream, c->pt);
    return copy_op(c, ev);
}

SC_HOT int sc_dec_cpy_dtod(sc_call *c, sc_event *ev) {
    const p_cuMemcpy *p = c->pp;
    ev->ptr = p->dst;
    ev->src = p->src;
    ev->size = p->ByteCount;
    ev->kind = COPY_D2D;
    if (c->async) ev->stream = norm_stream(p->hStream, c->pt);
    return copy_op(c, ev);
}

/* A synchronous peer copy is marked FLAG_PEER: the per-call path adds the
 * devices it is serialized with. */
SC_COLD int sc_dec_cpy_peer(sc_call *c, sc_event *ev) {
    const p_cuMemcpyPeer *p = c->pp;
    ev->ptr = p->dstDevice;
    ev->src = p->srcDevice;
    ev->size = p->ByteCount;
    ev->kind = COPY_D2D;
    if (c->async) ev->stream = norm_stream(p->hStream, c->pt);
    if (!c->async) ev->flags |= FLAG_PEER;
    return copy_op(c, ev);
}

SC_COLD int sc_dec_cpy_2d(sc_call *c, sc_event *ev) {
    const p_cuMemcpy2D *p = c->pp;
    const sc_CUDA_MEMCPY2D *d = p->pCopy;
    if (!d) return copy_op(c, ev);
    int dd, sd;
    ev->ptr = side(d->dstMemoryType, d->dstHost, d->dstDevice, d->dstY * d->dstPitch + d->dstXInBytes, &dd, &ev->flags);
    ev->src = side(d->srcMemoryType, d->srcHost, d->srcDevice, d->srcY * d->srcPitch + d->srcXInBytes, &sd, &ev->flags);
    uint64_t a = span(d->dstPitch, d->Height, d->WidthInBytes, d->Height, 1);
    uint64_t b = span(d->srcPitch, d->Height, d->WidthInBytes, d->Height, 1);
    ev->size = a > b ? a : b;
    ev->kind = kind_of(dd, sd);
    if (c->async) ev->stream = norm_stream(p->hStream, c->pt);
    return copy_op(c, ev);
}

SC_COLD int sc_dec_cpy_3d(sc_call *c, sc_event *ev) {
    const p_cuMemcpy3D *p = c->pp;
    if (!p->pCopy) return copy_op(c, ev);
    READ_COPY3D(p->pCopy, ev);
    if (c->async) ev->stream = norm_stream(p->hStream, c->pt);
    return copy_op(c, ev);
}

SC_COLD int sc_dec_cpy_3dpeer(sc_call *c, sc_event *ev) {
    const p_cuMemcpy3DPeer *p = c->pp;
    if (!c->async) ev->flags |= FLAG_PEER; /* as sc_dec_cpy_peer */
    if (!p->pCopy) return copy_op(c, ev);
    READ_COPY3D(p->pCopy, ev);
    if (c->async) ev->stream = norm_stream(p->hStream, c->pt);
    return copy_op(c, ev);
}

/* One event a copy, all on the batch's stream; this one is the first, the
 * others are written after it (c->more). A failed call copied nothing, and
 * its count need not fit its arrays. */
SC_COLD int sc_dec_cpy_batch(sc_call *c, sc_event *ev) {
    if (!c->ok) return 0;
    sc_more *m = sc_more_begin(c);
    if (c->elem == 3) { /* one copy with attributes: a batch of one */
        const p_cuMemcpyWithAttributesAsync *p = c->pp;
        static const size_t first = 0;
        m->batch = (sc_batch){&p->dst, &p->src, &p->size, 1, p->attr, p->attr ? &first : NULL, p->attr ? 1 : 0};
        ev->stream = norm_stream(p->hStream, c->pt);
    } else {
        m->batch = ((const p_cuMemcpyBatchAsync_v2 *)c->pp)->batch; /* both versions start so */
        ev->stream = norm_stream(c->elem == 1 ? ((const p_cuMemcpyBatchAsync *)c->pp)->hStream
                                              : ((const p_cuMemcpyBatchAsync_v2 *)c->pp)->hStream,
                                 c->pt);
    }
    if (!m->batch.dsts || !m->batch.srcs || !m->batch.sizes || m->batch.count == 0) return 0;
    sc_batch_copy(ev, &m->batch, 0);
    copy_op(c, ev);
    return sc_more_result(m);
}

/* As sc_dec_cpy_batch, with 3D copies between pointers and arrays. */
SC_COLD int sc_dec_cpy_3dbatch(sc_call *c, sc_event *ev) {
    if (!c->ok) return 0;
    sc_more *m = sc_more_begin(c);
    const void *pp = c->pp;
    switch (c->elem) {
    case 1:
        m->ops3d = ((const p_cuMemcpy3DBatchAsync *)pp)->opList;
        m->nops3d = ((const p_cuMemcpy3DBatchAsync *)pp)->numOps;
        ev->stream = norm_stream(((const p_cuMemcpy3DBatchAsync *)pp)->hStream, c->pt);
        break;
    case 2:
        m->ops3d = ((const p_cuMemcpy3DBatchAsync_v2 *)pp)->opList;
        m->nops3d = ((const p_cuMemcpy3DBatchAsync_v2 *)pp)->numOps;
        ev->stream = norm_stream(((const p_cuMemcpy3DBatchAsync_v2 *)pp)->hStream, c->pt);
        break;
    default:
        m->ops3d = ((const p_cuMemcpy3DWithAttributesAsync *)pp)->op;
        m->nops3d = 1;
        ev->stream = norm_stream(((const p_cuMemcpy3DWithAttributesAsync *)pp)->hStream, c->pt);
    }
    if (!m->ops3d || m->nops3d == 0) return 0;
    sc_batch_copy3d(ev, &m->ops3d[0]);
    copy_op(c, ev);
    return sc_more_result(m);
}

/* D8/D16/D32 differ only in the value's type, which we skip; each layout
 * is read as declared so the offsets of N and hStream are right. */
SC_HOT int sc_dec_set(sc_call *c, sc_event *ev) {
    const void *pp = c->pp;
    if (c->elem == 1) {
        const p_cuMemsetD8 *p = pp;
        ev->ptr = p->dstDevice;
        ev->size = p->N;
        if (c->async) ev->stream = norm_stream(p->hStream, c->pt);
    } else if (c->elem == 2) {
        const p_cuMemsetD16 *p = pp;
        ev->ptr = p->dstDevice;
        ev->size = (uint64_t)p->N * 2;
        if (c->async) ev->stream = norm_stream(p->hStream, c->pt);
    } else {
        const p_cuMemsetD32 *p = pp;
        ev->ptr = p->dstDevice;
        ev->size = (uint64_t)p->N * 4;
        if (c->async) ev->stream = norm_stream(p->hStream, c->pt);
    }
    return set_op(c, ev);
}

SC_COLD int sc_dec_set2d(sc_call *c, sc_event *ev) {
    const void *pp = c->pp;
    uint64_t pitch, w, h;
    if (c->elem == 1) {
        const p_cuMemsetD2D8 *p = pp;
        ev->ptr = p->dstDevice, pitch = p->dstPitch, w = p->Width, h = p->Height;
        if (c->async) ev->stream = norm_stream(p->hStream, c->pt);
    } else if (c->elem == 2) {
        const p_cuMemsetD2D16 *p = pp;
        ev->ptr = p->dstDevice, pitch = p->dstPitch, w = p->Width * 2, h = p->Height;
        if (c->async) ev->stream = norm_stream(p->hStream, c->pt);
    } else {
        const p_cuMemsetD2D32 *p = pp;
        ev->ptr = p->dstDevice, pitch = p->dstPitch, w = p->Width * 4, h = p->Height;
        if (c->async) ev->stream = norm_stream(p->hStream, c->pt);
    }
    ev->size = span(pitch, h, w, h, 1);
    return set_op(c, ev);
}
