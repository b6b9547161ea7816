//go:build ignore

/*
 * decode_allocs.c: the decoders of allocations, frees, memory pools and the
 * handles that share pools, allocations and events between processes
 * (decode.h). An allocation's address goes into the allocation map
 * (allocmap.c) after its event is written, a free's comes out of it.
 */
#include "decode.h"

SC_HOT int sc_dec_malloc_async(sc_call *c, sc_event *ev) {
    const p_cuMemAllocAsync *p = c->pp;
    ev->op = OP_MALLOC_ASYNC;
    ev->size = p->bytesize;
    ev->stream = norm_stream(p->hStream, c->pt);
    if (c->ok && p->dptr) c->alloc_add = (int64_t)(ev->ptr = *p->dptr);
    return 1;
}

SC_HOT int sc_dec_malloc_pool(sc_call *c, sc_event *ev) {
    const p_cuMemAllocFromPoolAsync *p = c->pp;
    ev->op = OP_MALLOC_ASYNC;
    ev->size = p->bytesize;
    ev->pool = (uint64_t)(uintptr_t)p->pool;
    ev->stream = norm_stream(p->hStream, c->pt);
    if (c->ok && p->dptr) c->alloc_add = (int64_t)(ev->ptr = *p->dptr);
    return 1;
}

SC_COLD int sc_dec_malloc(sc_call *c, sc_event *ev) {
    const p_cuMemAlloc *p = c->pp;
    ev->op = OP_MALLOC;
    ev->size = p->bytesize;
    if (c->ok && p->dptr) c->alloc_add = (int64_t)(ev->ptr = *p->dptr);
    return 1;
}

SC_COLD int sc_dec_malloc_pitch(sc_call *c, sc_event *ev) {
    const p_cuMemAllocPitch *p = c->pp;
    ev->op = OP_MALLOC;
    ev->size = (uint64_t)p->WidthInBytes * p->Height;
    if (c->ok && p->pPitch) ev->size = (uint64_t)*p->pPitch * p->Height;
    if (c->ok && p->dptr) c->alloc_add = (int64_t)(ev->ptr = *p->dptr);
    return 1;
}

SC_HOT int sc_dec_free_async(sc_call *c, sc_event *ev) {
    const p_cuMemFreeAsync *p = c->pp;
    ev->op = OP_FREE_ASYNC;
    ev->ptr = p->dptr;
    ev->stream = norm_stream(p->hStream, c->pt);
    if (c->ok) c->alloc_free = p->dptr;
    return 1;
}

SC_HOT int sc_dec_free(sc_call *c, sc_event *ev) {
    ev->op = OP_FREE;
    ev->ptr = ((const p_cuMemFree *)c->pp)->dptr;
    if (c->ok) c->alloc_free = ev->ptr;
    return 1;
}

SC_COLD int sc_dec_pool_create(sc_call *c, sc_event *ev) {
    const p_cuMemPoolCreate *p = c->pp;
    ev->op = OP_POOL_CREATE;
    if (c->ok && p->pool) ev->pool = (uint64_t)(uintptr_t)*p->pool;
    return 1;
}

/* ---- interprocess handles ---- */

/* The key of 64 bytes of interprocess data (export data, an event or
 * memory handle): their 64-bit FNV-1a hash, the same in the process that
 * made them and in the one that imports them. 0 if there are none. */
static uint64_t ipc_key(const sc_ipc_data *d) {
    if (!d) return 0;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < sizeof d->reserved; i++) h = (h ^ d->reserved[i]) * 0x100000001b3ull;
    return h;
}

/* The size of the allocation that holds p, as the driver says; 0 if it
 * cannot. */
static uint64_t range_size(CUdeviceptr p) {
    size_t n = 0;
    if (!sc_drv.cuPointerGetAttribute || sc_drv.cuPointerGetAttribute(&n, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p) != CUDA_SUCCESS)
        return 0;
    return n;
}

SC_COLD int sc_dec_pool_export(sc_call *c, sc_event *ev) {
    ev->op = OP_POOL_EXPORT;
    ev->pool = (uint64_t)(uintptr_t)((const p_cuMemPoolExportToShareableHandle *)c->pp)->pool;
    return 1;
}

SC_COLD int sc_dec_pool_import(sc_call *c, sc_event *ev) {
    const p_cuMemPoolImportFromShareableHandle *p = c->pp;
    ev->op = OP_POOL_IMPORT;
    if (c->ok && p->pool_out) ev->pool = (uint64_t)(uintptr_t)*p->pool_out;
    return 1;
}

SC_COLD int sc_dec_ptr_export(sc_call *c, sc_event *ev) {
    const p_cuMemPoolExportPointer *p = c->pp;
    ev->op = OP_PTR_EXPORT;
    ev->ptr = p->ptr;
    if (c->ok) ev->value = ipc_key(p->shareData_out);
    return 1;
}

/* A mapping of another process's allocation, at *out: live here from now,
 * and its address is one that launches' parameters can name. */
static int mapped(sc_call *c, sc_event *ev, CUdeviceptr *out) {
    if (c->ok && out && *out) {
        ev->ptr = *out;
        ev->size = range_size(ev->ptr);
        c->alloc_add = (int64_t)ev->ptr;
    }
    return 1;
}

SC_COLD int sc_dec_ptr_import(sc_call *c, sc_event *ev) {
    const p_cuMemPoolImportPointer *p = c->pp;
    ev->op = OP_PTR_IMPORT;
    ev->pool = (uint64_t)(uintptr_t)p->pool;
    ev->value = ipc_key(p->shareData);
    return mapped(c, ev, p->ptr_out);
}

SC_COLD int sc_dec_ipc_mem_open(sc_call *c, sc_event *ev) {
    const p_cuIpcOpenMemHandle *p = c->pp;
    ev->op = OP_IPC_MEM_OPEN;
    ev->value = ipc_key(&p->handle);
    return mapped(c, ev, p->pdptr);
}

SC_COLD int sc_dec_ipc_event_get(sc_call *c, sc_event *ev) {
    const p_cuIpcGetEventHandle *p = c->pp;
    ev->op = OP_IPC_EVENT_EXPORT;
    ev->event = (uint64_t)(uintptr_t)p->event;
    if (c->ok) ev->value = ipc_key(p->pHandle);
    return 1;
}

SC_COLD int sc_dec_ipc_event_open(sc_call *c, sc_event *ev) {
    const p_cuIpcOpenEventHandle *p = c->pp;
    ev->op = OP_IPC_EVENT_OPEN;
    ev->value = ipc_key(&p->handle);
    if (c->ok && p->phEvent) ev->event = (uint64_t)(uintptr_t)*p->phEvent;
    return 1;
}

SC_COLD int sc_dec_ipc_mem_get(sc_call *c, sc_event *ev) {
    const p_cuIpcGetMemHandle *p = c->pp;
    ev->op = OP_IPC_MEM_EXPORT;
    ev->ptr = p->dptr;
    if (c->ok) ev->value = ipc_key(p->pHandle);
    return 1;
}

SC_COLD int sc_dec_ipc_mem_close(sc_call *c, sc_event *ev) {
    ev->op = OP_IPC_MEM_CLOSE;
    ev->ptr = ((const p_cuMemFree *)c->pp)->dptr;
    if (c->ok) c->alloc_free = ev->ptr; /* the mapping is gone */
    return 1;
}
