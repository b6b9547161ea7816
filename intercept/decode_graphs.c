//go:build ignore

/*
 * decode_graphs.c: the decoders of stream capture, graphs and executable
 * graphs (decode.h): instantiation, update and launch; nodes added by hand
 * (kernel, copy, set and batch memory operation nodes as the work they do
 * at each launch, event record and wait nodes, child graphs and the bodies
 * of conditional nodes as graph_clone); and the calls after which a
 * graph's work is no longer known (graph_forget). It keeps the graph of
 * each event node the program added, for the calls that name the node
 * alone.
 */
#include "decode.h"

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
uint64_t sc_capturing_graph(uint64_t stream) {
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
        sc_launch_scan(ts, f, f ? sc_kernel_name(f) : NULL, k->kernelParams, k->extra, ev);
        break;
    }
    case SC_GRAPH_NODE_TYPE_MEMCPY:
        ev->op = OP_MEMCPY_ASYNC;
        sc_copy3d_read(ev, (const sc_CUDA_MEMCPY3D *)np);
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


/* ---- capture, instantiation, launch ---- */

SC_COLD int sc_dec_capture_begin(sc_call *c, sc_event *ev) {
    ev->op = OP_CAPTURE_BEGIN;
    ev->stream = norm_stream(((const p_stream_first *)c->pp)->hStream, c->pt);
    if (c->elem == 1) {
        ev->graph = (uint64_t)(uintptr_t)((const p_first_two *)c->pp)->second;
    } else if (c->ok && (ev->graph = sc_capturing_graph(ev->stream))) {
        ev->flags |= FLAG_LIFETIME; /* the new graph the capture builds */
    }
    return 1;
}

SC_COLD int sc_dec_capture_end(sc_call *c, sc_event *ev) {
    const p_cuStreamEndCapture *p = c->pp;
    ev->op = OP_CAPTURE_END;
    ev->stream = norm_stream(p->hStream, c->pt);
    if (c->ok && p->phGraph) ev->graph = (uint64_t)(uintptr_t)*p->phGraph;
    return 1;
}

SC_HOT int sc_dec_graph_launch(sc_call *c, sc_event *ev) {
    ev->op = OP_GRAPH_LAUNCH;
    ev->stream = norm_stream(((const p_cuGraphLaunch *)c->pp)->hStream, c->pt);
    ev->exec = (uint64_t)(uintptr_t)((const p_cuGraphLaunch *)c->pp)->hGraphExec;
    return 1;
}

SC_COLD int sc_dec_graph_instantiate(sc_call *c, sc_event *ev) {
    const p_graph_instantiate *p = c->pp;
    ev->op = OP_GRAPH_INSTANTIATE;
    ev->flags |= FLAG_LIFETIME; /* a new executable graph */
    ev->graph = (uint64_t)(uintptr_t)p->hGraph;
    if (c->ok && p->phGraphExec) ev->exec = (uint64_t)(uintptr_t)*p->phGraphExec;
    return 1;
}

SC_COLD int sc_dec_graph_exec_update(sc_call *c, sc_event *ev) {
    const p_graph_exec_update *p = c->pp;
    ev->op = OP_GRAPH_INSTANTIATE;
    ev->graph = (uint64_t)(uintptr_t)p->hGraph;
    ev->exec = (uint64_t)(uintptr_t)p->hGraphExec;
    return 1;
}

/* ---- nodes added by hand ---- */

enum { ADD_MEM_ALLOC, ADD_NODE, ADD_NODE_V2 };

/* A node added by hand, by its type (cuGraphAddNode) or a memory node
 * (cuGraphAddMemAllocNode). A memory node allocates at each launch, at the
 * address the driver fills in now; the analyzer leaves graph memory alone,
 * but the program may free it after a launch. */
static int add_node(sc_call *c, sc_event *ev, int how) {
    const void *pp = c->pp;
    sc_more *m = sc_more_begin(c);
    const unsigned char *np = how == ADD_NODE_V2 ? ((const p_cuGraphAddNode_v2 *)pp)->nodeParams
                                                 : ((const p_graph_add_node *)pp)->nodeParams;
    if (!c->ok || !np) return 0;
    if (how != ADD_MEM_ALLOC) {
        CUgraph g = how == ADD_NODE_V2 ? ((const p_cuGraphAddNode_v2 *)pp)->hGraph : ((const p_graph_add_node *)pp)->hGraph;
        int type;
        const unsigned char *own = node_params(np, &type);
        /* A copy node's CUDA_MEMCPY3D comes after its header. */
        if (work_node(c->ts, ev, type, type == SC_GRAPH_NODE_TYPE_MEMCPY ? own + SC_MEMCPY_NODE_COPY : own, 1, g))
            return sc_more_result(m);
        if (type == SC_GRAPH_NODE_TYPE_GRAPH) { /* a child graph node: a copy of the child's work */
            ev->op = OP_GRAPH_CLONE;
            ev->graph = (uint64_t)(uintptr_t)g;
            ev->src = child_graph_of(own);
            return sc_more_result(m);
        }
        if (type == SC_GRAPH_NODE_TYPE_CONDITIONAL) {
            /* One event a body graph, which the driver made: the program
             * fills them later. */
            const sc_conditional_node_params *cp = (const sc_conditional_node_params *)own;
            CUgraphNode *node = (CUgraphNode *)((const p_graph_add_node *)pp)->phGraphNode;
            ev->graph = (uint64_t)(uintptr_t)g;
            if (cp->phGraph_out && cp->size > 0) {
                ev->node = node ? (uint64_t)(uintptr_t)*node : 0; /* cuGraphDestroyNode drops its bodies */
                ev->op = OP_GRAPH_CLONE;
                ev->flags |= FLAG_CONDITIONAL;
                m->bodies = cp->phGraph_out;
                m->nbodies = cp->size;
                ev->src = (uint64_t)(uintptr_t)m->bodies[0];
            } else {
                ev->op = OP_GRAPH_FORGET; /* bodies not given back: the graph's work is unknown */
            }
            return sc_more_result(m);
        }
        CUgraphNode *ph = (CUgraphNode *)((const p_graph_add_node *)pp)->phGraphNode;
        if (event_node(ev, type, own, (uint64_t)(uintptr_t)g, 0, ph ? (uint64_t)(uintptr_t)*ph : 0)) {
            ev->flags |= FLAG_LIFETIME; /* a new node */
            remember_event_node(ph, g);
            return sc_more_result(m);
        }
        if (type == SC_GRAPH_NODE_TYPE_BATCH_MEM_OP) {
            if (!sc_memop_node(ev, (const sc_memop_node_params *)own, g, &m->memops, &m->nmemops)) return 0;
            return sc_more_result(m);
        }
        if (type == SC_GRAPH_NODE_TYPE_EMPTY || type == SC_GRAPH_NODE_TYPE_HOST)
            return 0; /* no device memory, no event: the graph's known work stays whole */
        if (type != SC_GRAPH_NODE_TYPE_MEM_ALLOC) { /* other work added to the graph */
            ev->op = OP_GRAPH_FORGET;
            ev->graph = (uint64_t)(uintptr_t)g;
            return sc_more_result(m);
        }
        np = own;
    }
    ev->op = OP_MALLOC_ASYNC;
    ev->flags |= FLAG_GRAPH_ALLOC;
    memcpy(&ev->size, np + SC_MEM_ALLOC_NODE_BYTESIZE, sizeof ev->size);
    memcpy(&ev->ptr, np + SC_MEM_ALLOC_NODE_DPTR, sizeof ev->ptr);
    if (ev->ptr) c->alloc_add = (int64_t)ev->ptr;
    return sc_more_result(m);
}

SC_COLD int sc_dec_graph_alloc(sc_call *c, sc_event *ev) { return add_node(c, ev, ADD_MEM_ALLOC); }
SC_COLD int sc_dec_graph_node(sc_call *c, sc_event *ev) { return add_node(c, ev, ADD_NODE); }
SC_COLD int sc_dec_graph_node_v2(sc_call *c, sc_event *ev) { return add_node(c, ev, ADD_NODE_V2); }

/* A kernel, copy or set node added with its own call. */
static int add_work_node(sc_call *c, sc_event *ev, int type) {
    if (!c->ok) return 0; /* no node */
    const p_graph_add_node *p = c->pp;
    if (!work_node(c->ts, ev, type, p->nodeParams, c->elem == 2, p->hGraph)) return 0;
    return 1;
}

SC_COLD int sc_dec_graph_kernel_node(sc_call *c, sc_event *ev) { return add_work_node(c, ev, SC_GRAPH_NODE_TYPE_KERNEL); }
SC_COLD int sc_dec_graph_memcpy_node(sc_call *c, sc_event *ev) { return add_work_node(c, ev, SC_GRAPH_NODE_TYPE_MEMCPY); }
SC_COLD int sc_dec_graph_memset_node(sc_call *c, sc_event *ev) { return add_work_node(c, ev, SC_GRAPH_NODE_TYPE_MEMSET); }

SC_COLD int sc_dec_graph_memop_node(sc_call *c, sc_event *ev) {
    if (!c->ok) return 0; /* no node */
    const p_graph_add_node *p = c->pp;
    sc_more *m = sc_more_begin(c);
    if (!sc_memop_node(ev, (const sc_memop_node_params *)p->nodeParams, p->hGraph, &m->memops, &m->nmemops)) return 0;
    return sc_more_result(m);
}

SC_COLD int sc_dec_graph_clone(sc_call *c, sc_event *ev) {
    if (!c->ok) return 0; /* no clone */
    const p_graph_clone *p = c->pp;
    ev->op = OP_GRAPH_CLONE;
    ev->flags |= FLAG_LIFETIME; /* a new graph */
    ev->graph = p->phGraphClone ? (uint64_t)(uintptr_t)*p->phGraphClone : 0;
    ev->src = (uint64_t)(uintptr_t)p->originalGraph;
    if (!ev->graph) return 0;
    return 1;
}

SC_COLD int sc_dec_graph_child(sc_call *c, sc_event *ev) {
    if (!c->ok) return 0;
    const p_graph_add_child *p = c->pp;
    ev->op = OP_GRAPH_CLONE;
    ev->graph = (uint64_t)(uintptr_t)p->hGraph;
    ev->src = (uint64_t)(uintptr_t)p->childGraph;
    return 1;
}

/* ---- event nodes ---- */

SC_COLD int sc_dec_graph_event_node(sc_call *c, sc_event *ev) {
    if (!c->ok) return 0; /* no node */
    const p_graph_add_event_node *p = c->pp;
    set_event_node(ev, c->elem == EVNODE_RECORD, p->event, (uint64_t)(uintptr_t)p->hGraph, 0,
                   p->phGraphNode ? (uint64_t)(uintptr_t)*p->phGraphNode : 0);
    ev->flags |= FLAG_LIFETIME; /* a new node */
    remember_event_node(p->phGraphNode, p->hGraph);
    return 1;
}

SC_COLD int sc_dec_graph_node_set_event(sc_call *c, sc_event *ev) {
    if (!c->ok) return 0;
    const p_graph_node_set_event *p = c->pp;
    uint64_t g = graph_of_node(p->hNode);
    if (!g) return 0; /* a captured node on a driver that cannot say whose */
    set_event_node(ev, c->elem == EVNODE_RECORD, p->event, g, 0, (uint64_t)(uintptr_t)p->hNode);
    return 1;
}

SC_COLD int sc_dec_graph_exec_set_event(sc_call *c, sc_event *ev) {
    if (!c->ok) return 0;
    const p_graph_exec_set_event *p = c->pp;
    /* hNode is the graph's node: the executable graph's counterpart. */
    set_event_node(ev, c->elem == EVNODE_RECORD, p->event, 0, (uint64_t)(uintptr_t)p->hGraphExec,
                   (uint64_t)(uintptr_t)p->hNode);
    return 1;
}

/* ---- changes to a graph's work ---- */

/* cuGraphNodeSetParams (exec_level 0) and cuGraphExecNodeSetParams. */
static int set_params(sc_call *c, sc_event *ev, int exec_level) {
    if (!c->ok) return 0;
    const void *pp = c->pp;
    sc_more *m = sc_more_begin(c);
    const unsigned char *np = exec_level ? ((const p_graph_exec_set_params *)pp)->nodeParams
                                         : ((const p_graph_node_set_params *)pp)->nodeParams;
    if (!np) return 0;
    int type;
    const unsigned char *own = node_params(np, &type);
    if (type == SC_GRAPH_NODE_TYPE_HOST || type == SC_GRAPH_NODE_TYPE_EMPTY)
        return 0; /* no device memory, no event: the graph's known work stays whole */
    if (type == SC_GRAPH_NODE_TYPE_BATCH_MEM_OP) /* new operations: after the forget below */
        m->memops_after = sc_node_memops((const sc_memop_node_params *)own, &m->memops, &m->nmemops);
    if (exec_level) {
        const p_graph_exec_set_params *p = pp;
        if (event_node(ev, type, own, 0, (uint64_t)(uintptr_t)p->hGraphExec, (uint64_t)(uintptr_t)p->hNode))
            return sc_more_result(m);
        ev->op = OP_GRAPH_FORGET;
        ev->exec = (uint64_t)(uintptr_t)p->hGraphExec;
        if (!ev->exec) return 0;
        if (type == SC_GRAPH_NODE_TYPE_GRAPH) { /* a child graph node given a new graph: as cuGraphExecChildGraphNodeSetParams */
            ev->node = (uint64_t)(uintptr_t)p->hNode;
            ev->src = child_graph_of(own);
        }
        return sc_more_result(m);
    }
    const p_graph_node_set_params *p = pp;
    if (type == SC_GRAPH_NODE_TYPE_EVENT_RECORD || type == SC_GRAPH_NODE_TYPE_WAIT_EVENT) {
        uint64_t g = graph_of_node(p->hNode);
        if (!g || !event_node(ev, type, own, g, 0, (uint64_t)(uintptr_t)p->hNode)) return 0;
        return sc_more_result(m);
    }
    ev->op = OP_GRAPH_FORGET; /* a node's parameters: its graph is not named */
    ev->graph = SC_ALL_GRAPHS;
    return sc_more_result(m);
}

SC_COLD int sc_dec_graph_node_set_params(sc_call *c, sc_event *ev) { return set_params(c, ev, 0); }
SC_COLD int sc_dec_graph_exec_set_params(sc_call *c, sc_event *ev) { return set_params(c, ev, 1); }

SC_COLD int sc_dec_graph_forget(sc_call *c, sc_event *ev) {
    if (!c->ok) return 0; /* nothing changed */
    const p_first_two *p = c->pp;
    sc_more *m = sc_more_begin(c);
    ev->op = OP_GRAPH_FORGET;
    switch (c->elem) {
    case FORGET_EXEC: ev->exec = (uint64_t)(uintptr_t)p->first; break;
    case FORGET_EXEC_NODE: /* a node enabled or disabled: its event nodes may change */
        ev->exec = (uint64_t)(uintptr_t)p->first;
        ev->node = (uint64_t)(uintptr_t)p->second;
        break;
    case FORGET_EXEC_CHILD: /* a child graph replaced: and the new one's event nodes come in */
        ev->exec = (uint64_t)(uintptr_t)p->first;
        ev->node = (uint64_t)(uintptr_t)p->second;
        ev->src = (uint64_t)(uintptr_t)((const p_first_three *)c->pp)->third;
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
        m->memops_after = sc_node_memops((const sc_memop_node_params *)p->second, &m->memops, &m->nmemops);
        break;
    case FORGET_EXEC_MEMOPS:
        ev->exec = (uint64_t)(uintptr_t)p->first;
        m->memops_after =
            sc_node_memops((const sc_memop_node_params *)((const p_first_three *)c->pp)->third, &m->memops, &m->nmemops);
        break;
    case FORGET_NODE:
        forget_event_node((CUgraphNode)p->first); /* its handle may come back as another node */
        ev->node = (uint64_t)(uintptr_t)p->first;
        ev->graph = SC_ALL_GRAPHS;
        break;
    default: ev->graph = SC_ALL_GRAPHS;
    }
    if (!ev->graph && !ev->exec) return 0;
    return sc_more_result(m);
}
