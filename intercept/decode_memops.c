//go:build ignore

/*
 * decode_memops.c: the decoder of stream memory operations
 * (cuStreamWaitValue32 and the like, cuStreamBatchMemOp: one event an
 * operation), and the reading of batch memory operation nodes' operations
 * for decode_graphs.c (decode.h).
 */
#include "decode.h"

/* Makes ev operation i of a cuStreamBatchMemOp: a wait or write names an
 * address, a value (a 32-bit one's in the low half of the union) and
 * flags; a flush or barrier only flags. */
void sc_batch_memop(sc_event *ev, const sc_memop_params *ops, unsigned i) {
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
int sc_node_memops(const sc_memop_node_params *np, const sc_memop_params **ops, unsigned *n) {
    if (!np || !np->paramArray || np->count == 0) return 0;
    *ops = np->paramArray;
    *n = np->count;
    return 1;
}

/* Makes ev the first operation of a batch memory operation node added to
 * graph (cuGraphAddBatchMemOpNode, cuGraphAddNode of that type): each is
 * a stream memory operation of the graph's launches (FLAG_GRAPH_NODE);
 * *ops and *n take the batch, for the others. 0 if it names none. */
int sc_memop_node(sc_event *ev, const sc_memop_node_params *np, CUgraph graph, const sc_memop_params **ops,
                      unsigned *n) {
    if (!sc_node_memops(np, ops, n)) return 0;
    ev->op = OP_STREAM_MEMOP;
    ev->flags |= FLAG_GRAPH_NODE;
    ev->graph = (uint64_t)(uintptr_t)graph;
    sc_batch_memop(ev, *ops, 0);
    return 1;
}

/* A wait for a value, or a write of one, at an address; a batch is one
 * event an operation (c->more). A failed batch ran none: its operations are
 * not read. */
SC_COLD int sc_dec_stream_memop(sc_call *c, sc_event *ev) {
    ev->op = OP_STREAM_MEMOP;
    if (c->elem != 0) {
        const p_stream_memop *p = c->pp;
        ev->stream = norm_stream(p->stream, c->pt);
        ev->ptr = p->addr;
        ev->memop = c->elem;
        if (c->elem == SC_MEMOP_WAIT32 || c->elem == SC_MEMOP_WRITE32) {
            ev->value = ((const p_stream_memop32 *)c->pp)->value;
            ev->mem_flags = ((const p_stream_memop32 *)c->pp)->flags;
        } else {
            ev->value = ((const p_stream_memop64 *)c->pp)->value;
            ev->mem_flags = ((const p_stream_memop64 *)c->pp)->flags;
        }
        return 1;
    }
    const p_cuStreamBatchMemOp *p = c->pp;
    ev->stream = norm_stream(p->stream, c->pt);
    if (c->ok && (!p->paramArray || p->count == 0)) return 0; /* an empty batch did nothing */
    sc_more *m = sc_more_begin(c);
    if (c->ok) {
        m->memops = p->paramArray;
        m->nmemops = p->count;
        sc_batch_memop(ev, m->memops, 0);
    }
    return sc_more_result(m);
}
