//go:build ignore

/*
 * decode_allocs.c: the decoders of allocations and frees (stream-ordered,
 * and the synchronous families: device, pitched, managed, pinned and
 * registered host memory), virtual memory mappings, memory pools and their
 * attributes, and the handles that share pools, allocations and events
 * between processes (decode.h). An allocation's address goes into the
 * allocation map (allocmap.c) after its event is written, a free's comes
 * out of it.
 */
#include "decode.h"

/* ---- default pools ---- */

/* A pool handle that is a device's default pool (cuDeviceGetDefaultMemPool)
 * is recorded as pool 0, as a cuMemAllocAsync's pool is: the analyzer
 * tells the default pool by that name, however the program got its handle
 * (CuPy allocates from the handle cudaDeviceGetMemPool gives). The handles
 * are asked of the driver once a device, at the first allocation from a
 * pool or call that sets a pool's attribute, chooses or trims a pool; a
 * device's default pool stays the same handle. */
#define MAX_DEVICES 64
static _Atomic uint64_t default_pools[MAX_DEVICES]; /* device d's default pool; 0 not known */
/* Devices asked about: [0, ndefault), -1 before the first call that names a
 * pool; a device the driver did not answer for is asked again. */
static _Atomic int ndefault = -1;

static void learn_default_pools(void) {
    static _Atomic int ndevices = -1;
    int n = atomic_load(&ndevices);
    if (n < 0) {
        n = 0;
        if (!sc_drv.cuDeviceGetCount || !sc_drv.cuDeviceGetDefaultMemPool || sc_drv.cuDeviceGetCount(&n) != CUDA_SUCCESS)
            n = 0;
        if (n > MAX_DEVICES) n = MAX_DEVICES;
        atomic_store(&ndevices, n);
    }
    for (int d = 0; d < n; d++) {
        if (atomic_load_explicit(&default_pools[d], memory_order_relaxed)) continue;
        CUmemoryPool h = NULL;
        if (sc_drv.cuDeviceGetDefaultMemPool(&h, d) == CUDA_SUCCESS && h)
            atomic_store_explicit(&default_pools[d], (uint64_t)(uintptr_t)h, memory_order_relaxed);
    }
    int had = atomic_load(&ndefault);
    while (had < n && !atomic_compare_exchange_weak(&ndefault, &had, n)) {
    }
}

/* 1 and *dev the device if h is a default pool learned so far. */
static int known_default(uint64_t h, int32_t *dev) {
    int n = atomic_load_explicit(&ndefault, memory_order_relaxed);
    for (int d = 0; h && d < n; d++)
        if (atomic_load_explicit(&default_pools[d], memory_order_relaxed) == h) {
            *dev = d;
            return 1;
        }
    return 0;
}

/* The trace's name of pool p at a pool call: 0 if it is a device's default
 * pool, and then *dev is that device. */
static uint64_t pool_name(CUmemoryPool p, int32_t *dev) {
    uint64_t h = (uint64_t)(uintptr_t)p;
    if (!h || known_default(h, dev)) return 0;
    learn_default_pools();
    return known_default(h, dev) ? 0 : h;
}

/* ---- stream-ordered allocations ---- */

_Static_assert(SC_MEMPOOL_ATTR_RELEASE_THRESHOLD == POOL_ATTR_RELEASE_THRESHOLD, "the model's number of the release threshold");

SC_HOT int sc_dec_malloc_async(sc_call *c, sc_event *ev) {
    const p_cuMemAllocAsync *p = c->pp;
    ev->op = OP_MALLOC_ASYNC;
    ev->size = p->bytesize;
    ev->stream = norm_stream(p->hStream, c->pt);
    if (c->ok && p->dptr) c->alloc_add = (int64_t)(ev->ptr = *p->dptr);
    return 1;
}

/* From the event's device's default pool: pool 0, as cuMemAllocAsync's. */
SC_HOT __attribute__((noinline)) static void default_pool_of(sc_event *ev) {
    int32_t d = -1;
    if (atomic_load_explicit(&ndefault, memory_order_relaxed) < 0) learn_default_pools();
    if (known_default(ev->pool, &d) && d == ev->device) ev->pool = 0;
}

SC_HOT int sc_dec_malloc_pool(sc_call *c, sc_event *ev) {
    const p_cuMemAllocFromPoolAsync *p = c->pp;
    ev->op = OP_MALLOC_ASYNC;
    ev->size = p->bytesize;
    ev->pool = (uint64_t)(uintptr_t)p->pool;
    if (atomic_load_explicit(&ndefault, memory_order_relaxed)) default_pool_of(ev); /* none: no device has one */
    ev->stream = norm_stream(p->hStream, c->pt);
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

/* ---- synchronous allocations and frees: the families ----
 * Each is an OP_MALLOC or OP_FREE with its family and the time inside the
 * call (their rows are timed, apitable.c). A failed call is recorded with
 * its result, a rejected free too (a free by another family's API is the
 * program's bug whatever CUDA answered). */

static sc_ext *sync_call(sc_call *c, sc_event *ev, uint32_t op, uint32_t family) {
    ev->op = op;
    sc_ext *x = sc_ext_begin(c, ev);
    x->dur = sc_call_dur(c);
    x->family = family;
    return x;
}

/* cuMemAlloc_v2 (elem FAMILY_DEVICE), cuMemAllocManaged (FAMILY_MANAGED:
 * one more parameter, the flags, after). */
SC_COLD int sc_dec_malloc(sc_call *c, sc_event *ev) {
    const p_cuMemAlloc *p = c->pp;
    sync_call(c, ev, OP_MALLOC, c->elem);
    ev->size = p->bytesize;
    if (c->ok && p->dptr) c->alloc_add = (int64_t)(ev->ptr = *p->dptr);
    return 1;
}

/* A loaded module's global variable, whose address and size a lookup gives
 * (elem FAMILY_MODULE). The module's load allocated it, its unload frees
 * it: recorded as an allocation of the module family, so that the copies a
 * library makes into it (cuFFT's) and launches naming it are uses of known
 * memory. A failed lookup allocated nothing and is not recorded. */
SC_COLD int sc_dec_module_global(sc_call *c, sc_event *ev) {
    const p_cuModuleGetGlobal *p = c->pp;
    if (!c->ok || !p->dptr || !*p->dptr) return 0;
    sync_call(c, ev, OP_MALLOC, c->elem);
    ev->size = p->bytes ? *p->bytes : 1;
    c->alloc_add = (int64_t)(ev->ptr = *p->dptr);
    return 1;
}

/* Size pitch x height: the rows as laid out, the last one's padding too. */
SC_COLD int sc_dec_malloc_pitch(sc_call *c, sc_event *ev) {
    const p_cuMemAllocPitch *p = c->pp;
    sc_ext *x = sync_call(c, ev, OP_MALLOC, FAMILY_PITCHED);
    x->height = p->Height;
    ev->size = (uint64_t)p->WidthInBytes * p->Height;
    if (c->ok && p->pPitch) ev->size = (uint64_t)(x->pitch = *p->pPitch) * p->Height;
    if (c->ok && p->dptr) c->alloc_add = (int64_t)(ev->ptr = *p->dptr);
    return 1;
}

/* Pinned host memory: its host address, the device's too under unified
 * addressing (cuMemHostAlloc's CU_MEMHOSTALLOC_DEVICEMAP). */
SC_COLD int sc_dec_malloc_host(sc_call *c, sc_event *ev) {
    const p_cuMemAllocHost *p = c->pp;
    sync_call(c, ev, OP_MALLOC, FAMILY_HOST);
    ev->size = p->bytesize;
    if (c->ok && p->pp && *p->pp) c->alloc_add = (int64_t)(ev->ptr = (uint64_t)(uintptr_t)*p->pp);
    return 1;
}

SC_COLD int sc_dec_host_register(sc_call *c, sc_event *ev) {
    const p_cuMemHostRegister *p = c->pp;
    sync_call(c, ev, OP_MALLOC, FAMILY_REGISTERED);
    ev->ptr = (uint64_t)(uintptr_t)p->p;
    ev->size = p->bytesize;
    if (c->ok && ev->ptr) c->alloc_add = (int64_t)ev->ptr;
    return 1;
}

SC_HOT int sc_dec_free(sc_call *c, sc_event *ev) {
    sync_call(c, ev, OP_FREE, FAMILY_DEVICE);
    ev->ptr = ((const p_cuMemFree *)c->pp)->dptr;
    if (c->ok) c->alloc_free = ev->ptr;
    return 1;
}

/* cuMemFreeHost (elem FAMILY_HOST), cuMemHostUnregister (FAMILY_REGISTERED). */
SC_COLD int sc_dec_free_host(sc_call *c, sc_event *ev) {
    sync_call(c, ev, OP_FREE, c->elem);
    ev->ptr = (uint64_t)(uintptr_t)((const p_cuMemFreeHost *)c->pp)->p;
    if (c->ok) c->alloc_free = ev->ptr;
    return 1;
}

/* ---- virtual memory management ----
 * A mapped range is usable from its map to its unmap, whatever becomes of
 * its physical handle (cuMemCreate, cuMemRelease) and of the reservation
 * (cuMemAddressReserve, cuMemAddressFree), which are not recorded. */

static int vmm_range(sc_call *c, sc_event *ev, uint32_t op) {
    const p_cuMemUnmap *p = c->pp; /* cuMemMap starts so too */
    ev->op = op;
    ev->ptr = p->ptr;
    ev->size = p->size;
    return 1;
}

SC_COLD int sc_dec_vmm_map(sc_call *c, sc_event *ev) {
    vmm_range(c, ev, OP_VMM_MAP);
    if (c->ok && ev->ptr) c->alloc_add = (int64_t)ev->ptr;
    return 1;
}

/* The allocation map forgets every mapping in the range (recorder.c). */
SC_COLD int sc_dec_vmm_unmap(sc_call *c, sc_event *ev) {
    vmm_range(c, ev, OP_VMM_UNMAP);
    if (c->ok) c->alloc_free = ev->ptr;
    return 1;
}

/* ---- pools ---- */

SC_COLD int sc_dec_pool_create(sc_call *c, sc_event *ev) {
    const p_cuMemPoolCreate *p = c->pp;
    ev->op = OP_POOL_CREATE;
    if (c->ok && p->pool) ev->pool = (uint64_t)(uintptr_t)*p->pool;
    return 1;
}

/* The attribute and the value the call points at: an int for the reuse
 * policies, a cuuint64_t for the release threshold and the memory
 * counters; another attribute's value is not read. A default pool's event
 * is on its device. */
SC_COLD int sc_dec_pool_set_attr(sc_call *c, sc_event *ev) {
    const p_cuMemPoolSetAttribute *p = c->pp;
    ev->op = OP_POOL_SET_ATTR;
    ev->pool = pool_name(p->pool, &ev->device);
    sc_ext *x = sc_ext_begin(c, ev);
    x->attr = p->attr > 0 && p->attr <= 255 ? (uint32_t)p->attr : 0;
    if (p->value && p->attr >= SC_MEMPOOL_ATTR_REUSE_FIRST && p->attr <= SC_MEMPOOL_ATTR_REUSE_LAST)
        ev->value = (uint32_t) * (const int *)p->value;
    else if (p->value && p->attr >= SC_MEMPOOL_ATTR_RELEASE_THRESHOLD && p->attr <= SC_MEMPOOL_ATTR_USED_MEM_HIGH)
        ev->value = *(const uint64_t *)p->value;
    return 1;
}

/* Device dev's current pool becomes p: pool 0 when p is dev's default. */
static int set_pool(sc_event *ev, CUdevice dev, CUmemoryPool p) {
    int32_t d = -1;
    ev->op = OP_DEVICE_SET_POOL;
    ev->device = dev;
    ev->pool = pool_name(p, &d);
    if (ev->pool == 0 && d != dev) ev->pool = (uint64_t)(uintptr_t)p; /* another device's default: CUDA refuses it */
    return 1;
}

SC_COLD int sc_dec_device_set_pool(sc_call *c, sc_event *ev) {
    const p_cuDeviceSetMemPool *p = c->pp;
    return set_pool(ev, p->dev, p->pool);
}

/* cuMemSetMemPool of a device's pinned memory is cuDeviceSetMemPool; of
 * host memory or managed memory, nothing cuMemAllocAsync takes from. */
SC_COLD int sc_dec_mem_set_pool(sc_call *c, sc_event *ev) {
    const p_cuMemSetMemPool *p = c->pp;
    if (!p->location || p->location->type != SC_MEM_LOCATION_TYPE_DEVICE || p->type != SC_MEM_ALLOCATION_TYPE_PINNED)
        return 0;
    return set_pool(ev, p->location->id, p->pool);
}

SC_COLD int sc_dec_pool_trim(sc_call *c, sc_event *ev) {
    const p_cuMemPoolTrimTo *p = c->pp;
    ev->op = OP_POOL_TRIM;
    ev->pool = pool_name(p->pool, &ev->device);
    ev->value = p->minBytesToKeep;
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
