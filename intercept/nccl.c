//go:build ignore

/*
 * nccl.c: NCCL's communication calls as events. NCCL's kernels read their
 * buffers from work descriptors in device memory, not from their launch
 * parameters: only the API call names the buffers and the stream. The
 * shim exports wrappers under NCCL's names, with NCCL's signatures
 * (nccl.h), which a preloaded shim interposes on the program's calls
 * (`streamcheck run --preload`; injected, the shim is not in the global
 * scope and interposes nothing). A program that dlopens libnccl and looks
 * its functions up gets the wrappers from the shim's dlsym (interpose.c,
 * sc_nccl_swap), each calling the function that lookup found.
 *
 * A wrapper calls the real function first, exactly as the program did,
 * and records after it returns: one OP_COLLECTIVE, a use of the send
 * buffer (read) and the receive buffer (written) on the call's stream.
 * NCCL's own CUDA calls inside it (its launches, and the event records
 * and waits that join the streams of a group) are recorded through CUPTI
 * as any program's. Between ncclGroupStart and ncclGroupEnd, NCCL enqueues
 * nothing until ncclGroupEnd: the calls' events (their stacks taken at the
 * call) are written when the outermost ncclGroupEnd returns, each on its
 * own stream. ncclMemAlloc and ncclMemFree are recorded through the driver
 * calls NCCL makes inside them (cuMemMap and cuMemUnmap, or cudaMalloc and
 * cudaFree), under their own names: ncclMemFree does not wait for the
 * device, as cuMemUnmap does not. ncclCommRegister orders nothing and is
 * not recorded.
 *
 * When nothing records, a wrapper is the real call and nothing else.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"

typedef int ncclResult_t;
typedef struct ncclComm *ncclComm_t;
typedef int ncclDataType_t;
typedef int ncclRedOp_t;
typedef struct CUstream_st *cudaStream_t;

enum { NCCL_SUCCESS = 0, NCCL_INVALID_USAGE = 5, NCCL_IN_PROGRESS = 7 };

/* The real functions' types. */
typedef ncclResult_t (*coll_fn)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*rooted_fn)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t,
                                  cudaStream_t);
typedef ncclResult_t (*gather_fn)(const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*bcast_fn)(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*p2p_fn)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*comm_int_fn)(ncclComm_t, int *);
typedef ncclResult_t (*comm_fn)(ncclComm_t);
typedef ncclResult_t (*void_fn)(void);
typedef ncclResult_t (*alloc_fn)(void **, size_t);
typedef ncclResult_t (*free_fn)(void *);

/* ---- the real functions ---- */

/* A function of the interposition backend that looks a symbol up past its
 * own dlsym hook, where that backend is built in. */
extern void *sc_dlsym_real(void *handle, const char *name) __attribute__((weak));

static void *find_symbol(void *handle, const char *name) {
    return sc_dlsym_real ? sc_dlsym_real(handle, name) : dlsym(handle, name);
}

static int is_nccl_path(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, "libnccl.so", 10) == 0 || strncmp(base, "librccl.so", 10) == 0;
}

static int nccl_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    if (!info->dlpi_name || !*info->dlpi_name || !is_nccl_path(info->dlpi_name)) return 0;
    *(void **)data = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
    return *(void **)data != NULL;
}

static void *wrapper_of(const char *name);

/* NCCL's name, as the library loaded after the shim defines it, or as the
 * libnccl (librccl) loaded in the process does: a library dlopened with
 * RTLD_LOCAL (a Python extension's) is not in the global scope. NULL if
 * NCCL is not loaded. */
static void *real_symbol(const char *name) {
    void *own = wrapper_of(name);
    void *f = find_symbol(RTLD_NEXT, name);
    if (f && f != own) return f;
    void *h = NULL;
    dl_iterate_phdr(nccl_object, &h);
    f = h ? find_symbol(h, name) : NULL;
    return f != own ? f : NULL;
}

/* The NCCL functions the wrappers call, each found once: by real_symbol,
 * or set by the dlsym that handed the program the wrapper. */
#define NCCL_REALS(X)                                                                                              \
    X(ncclAllReduce) X(ncclReduce) X(ncclBroadcast) X(ncclBcast) X(ncclAllGather) X(ncclReduceScatter)           \
    X(ncclAlltoAll) X(ncclGather) X(ncclScatter) X(ncclSend) X(ncclRecv) X(ncclGroupStart) X(ncclGroupEnd)       \
    X(ncclMemAlloc) X(ncclMemFree) X(ncclCommDestroy) X(ncclCommAbort) X(ncclCommCount) X(ncclCommUserRank)    \
    X(ncclCommCuDevice)
#define NC_ID(name) NC_##name,
enum { NCCL_REALS(NC_ID) NC_N };
#define NC_NAME(name) #name,
static const char *const real_names[NC_N] = {NCCL_REALS(NC_NAME)};
static _Atomic(void *) reals[NC_N];

/* Any thread may race to it: all find the same. */
static void *real_of(int id) {
    void *f = atomic_load_explicit(&reals[id], memory_order_acquire);
    if (!f && (f = real_symbol(real_names[id]))) {
        void *none = NULL; /* one set meanwhile (by dlsym) stays */
        if (!atomic_compare_exchange_strong(&reals[id], &none, f)) f = none;
    }
    return f;
}
#define REAL(type, name) type fn_ = (type)real_of(NC_##name)

/* ---- recording ---- */

static int recording(void) {
    sc_interpose_ensure("an NCCL call", NULL); /* it reaches CUDA */
    return atomic_load_explicit(&sc_active, memory_order_relaxed) && !sc_callback_only &&
           !atomic_load_explicit(&sc_trace_failed, memory_order_relaxed);
}

/* What a communicator says of itself, once: its rank count, this
 * process's rank in it and its device, packed (comm_info). */
static lfmap comms;
typedef struct {
    uint32_t nranks;
    int32_t rank, device;
} comm_info;

static comm_info info_of(ncclComm_t comm) {
    comm_info ci = {0, -1, -1};
    uint64_t v;
    if (comm && lfmap_get(&comms, (uint64_t)(uintptr_t)comm, &v)) {
        ci.nranks = (uint32_t)v;
        ci.rank = (int32_t)((v >> 32) & 0xffffff) - 1;
        ci.device = (int32_t)(v >> 56) - 1;
        return ci;
    }
    if (!comm) return ci;
    REAL(comm_int_fn, ncclCommCount);
    int n = 0, r = -1, d = -1;
    if (!fn_ || fn_(comm, &n) != NCCL_SUCCESS || n <= 0) return ci;
    {
        REAL(comm_int_fn, ncclCommUserRank);
        if (!fn_ || fn_(comm, &r) != NCCL_SUCCESS || r < 0 || r >= 0xffffff) r = -1;
    }
    {
        REAL(comm_int_fn, ncclCommCuDevice);
        if (!fn_ || fn_(comm, &d) != NCCL_SUCCESS || d < 0 || d >= 0xff) d = -1;
    }
    ci.nranks = (uint32_t)n, ci.rank = r, ci.device = d;
    v = (uint64_t)ci.nranks | (uint64_t)(r + 1) << 32 | (uint64_t)(d + 1) << 56;
    sc_lock_acquire();
    lfmap_put_locked(&comms, (uint64_t)(uintptr_t)comm, v);
    sc_lock_release();
    return ci;
}

/* A destroyed communicator's handle may name another one later. */
static void forget_comm(ncclComm_t comm) {
    sc_lock_acquire();
    lfmap_del_locked(&comms, (uint64_t)(uintptr_t)comm);
    sc_lock_release();
}

/* Bytes of one element of an ncclDataType_t; 0 for a type this does not
 * know (the event then says no size). */
static uint64_t type_size(ncclDataType_t t) {
    static const uint8_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
    return t >= 0 && (size_t)t < sizeof sizes ? sizes[t] : 0;
}

static uint64_t mul_sat(uint64_t a, uint64_t b) { return b && a > UINT64_MAX / b ? UINT64_MAX : a * b; }

/* One call of a group, kept until its ncclGroupEnd. */
typedef struct {
    sc_event ev;
    sc_ext ext;
} pending_call;

#define SC_MAX_GROUP 65536 /* NCCL takes at most 2048 calls in a group; past this, calls are written at once */
/* The thread's group: initial-exec, as recorder.c's state, so that no
 * access calls __tls_get_addr (of the dynamic loader). */
static __thread struct {
    int depth;
    pending_call *calls;
    size_t n, cap;
} group __attribute__((tls_model("initial-exec")));
#define group_depth group.depth
#define group_calls group.calls
#define group_n group.n
#define group_cap group.cap

/* A thread's group array goes with the thread. */
static pthread_key_t group_key;
static pthread_once_t group_once = PTHREAD_ONCE_INIT;
static int group_key_ok;
static void group_free(void *p) {
    free(p);
    group_calls = NULL;
    group_n = group_cap = 0;
}
static void group_key_init(void) { group_key_ok = pthread_key_create(&group_key, group_free) == 0; }

/* A call's sides: what it reads at src and writes at dst. */
typedef struct {
    const char *api;
    _Atomic uint32_t *sid;
    const void *src;
    uint64_t src_elems; /* elements read, in units of count */
    void *dst;
    uint64_t dst_elems;
} coll_sides;

static void write_call(sc_tstate *ts, sc_event *ev) {
    ts->busy = 1; /* the driver calls sc_emit makes (a stream's flags) are ours */
    sc_emit(ts, ev);
    ts->busy = 0;
}

/* Records a call that returned r, after it returned. */
static void record_call(ncclResult_t r, const coll_sides *c, size_t count, ncclDataType_t type, ncclComm_t comm,
                        cudaStream_t stream, comm_info ci) {
    sc_tstate *ts = sc_tls();
    if (!ts || ts->busy) return;
    ts->busy = 1;
    uint32_t sid = atomic_load_explicit(c->sid, memory_order_relaxed);
    if (!sid) atomic_store(c->sid, sid = sc_intern(c->api));
    uint64_t elem = type_size(type);
    pending_call p;
    memset(&p, 0, sizeof p);
    sc_event *ev = &p.ev;
    ev->op = OP_COLLECTIVE;
    ev->device = ci.device;
    ev->api = sid;
    /* ncclInProgress: a nonblocking communicator took the call. */
    ev->result = r == NCCL_IN_PROGRESS ? 0 : r;
    ev->stream = norm_stream((CUstream)stream, 0);
    ev->src = (uint64_t)(uintptr_t)c->src;
    ev->ptr = (uint64_t)(uintptr_t)c->dst;
    p.ext.src_size = c->src ? mul_sat(mul_sat(count, elem), c->src_elems) : 0;
    ev->size = c->dst ? mul_sat(mul_sat(count, elem), c->dst_elems) : 0;
    p.ext.nranks = ci.nranks;
    ev->stack = sc_stack_capture(ts);
    ts->busy = 0;
    if (group_depth > 0 && group_n < SC_MAX_GROUP) {
        if (group_n == group_cap) {
            size_t cap = group_cap ? group_cap * 2 : 64;
            pending_call *g = realloc(group_calls, cap * sizeof *g);
            if (!g) goto now;
            group_calls = g, group_cap = cap;
            pthread_once(&group_once, group_key_init);
            if (group_key_ok) pthread_setspecific(group_key, g);
        }
        group_calls[group_n++] = p;
        return;
    }
now:
    ev->ext = &p.ext;
    write_call(ts, ev);
}

/* Writes the calls of the group that ended with r. */
static void flush_group(ncclResult_t r) {
    sc_tstate *ts = group_n ? sc_tls() : NULL;
    for (size_t i = 0; ts && !ts->busy && i < group_n; i++) {
        pending_call *p = &group_calls[i];
        if (r != NCCL_SUCCESS && r != NCCL_IN_PROGRESS && p->ev.result == 0) p->ev.result = r; /* nothing was enqueued */
        p->ev.ext = &p->ext;
        write_call(ts, &p->ev);
    }
    group_n = 0;
}

/* The rank count of a gather's or scatter's communicator, as a count's
 * multiple (1 when unknown: the size is then a lower bound). */
static uint64_t ranks(comm_info ci) { return ci.nranks ? ci.nranks : 1; }

/* ---- the wrappers ---- */

/* Each wrapper: the real call, then, if the shim records, its event. The
 * program's errno is what the real call left. */
#define CALL(type, name, ...)                                            \
    REAL(type, name);                                                    \
    if (!fn_) return NCCL_INVALID_USAGE; /* NCCL is not loaded */        \
    ncclResult_t r = fn_(__VA_ARGS__);                                   \
    if (!recording()) return r;                                          \
    int saved_errno = errno;                                             \
    static _Atomic uint32_t sid_;                                        \
    comm_info ci = info_of(comm);                                        \
    int root_ = ci.rank < 0 || ci.rank == root_rank; /* unknown: both sides */ \
    (void)root_

#define DONE(src, srcn, dst, dstn)                                                    \
    {                                                                                  \
        coll_sides s_ = {__func__, &sid_, (src), (srcn), (dst), (dstn)};              \
        record_call(r, &s_, count, datatype, comm, stream, ci);                        \
    }                                                                                  \
    errno = saved_errno;                                                               \
    return r

SC_EXPORT ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                     ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
    const int root_rank = -1;
    CALL(coll_fn, ncclAllReduce, sendbuff, recvbuff, count, datatype, op, comm, stream);
    DONE(sendbuff, 1, recvbuff, 1);
}

SC_EXPORT ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                  ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
    const int root_rank = root;
    CALL(rooted_fn, ncclReduce, sendbuff, recvbuff, count, datatype, op, root, comm, stream);
    DONE(sendbuff, 1, root_ ? recvbuff : NULL, 1); /* recvbuff is used on the root only */
}

SC_EXPORT ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                     int root, ncclComm_t comm, cudaStream_t stream) {
    const int root_rank = root;
    CALL(bcast_fn, ncclBroadcast, sendbuff, recvbuff, count, datatype, root, comm, stream);
    DONE(root_ ? sendbuff : NULL, 1, recvbuff, 1); /* sendbuff is used on the root only */
}

/* In place: the root reads the buffer, the others write it. */
SC_EXPORT ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                                 cudaStream_t stream) {
    const int root_rank = root;
    CALL(p2p_fn, ncclBcast, buff, count, datatype, root, comm, stream);
    DONE(root_ ? buff : NULL, 1, ci.rank == root ? NULL : buff, 1);
}

SC_EXPORT ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,
                                     ncclComm_t comm, cudaStream_t stream) {
    const int root_rank = -1;
    size_t count = sendcount;
    CALL(gather_fn, ncclAllGather, sendbuff, recvbuff, sendcount, datatype, comm, stream);
    DONE(sendbuff, 1, recvbuff, ranks(ci));
}

SC_EXPORT ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                                         ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                         cudaStream_t stream) {
    const int root_rank = -1;
    size_t count = recvcount;
    CALL(coll_fn, ncclReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, comm, stream);
    DONE(sendbuff, ranks(ci), recvbuff, 1);
}

SC_EXPORT ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                    ncclComm_t comm, cudaStream_t stream) {
    const int root_rank = -1;
    CALL(gather_fn, ncclAlltoAll, sendbuff, recvbuff, count, datatype, comm, stream);
    DONE(sendbuff, ranks(ci), recvbuff, ranks(ci));
}

SC_EXPORT ncclResult_t ncclGather(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                  int root, ncclComm_t comm, cudaStream_t stream) {
    const int root_rank = root;
    CALL(bcast_fn, ncclGather, sendbuff, recvbuff, count, datatype, root, comm, stream);
    DONE(sendbuff, 1, root_ ? recvbuff : NULL, ranks(ci)); /* recvbuff is used on the root only */
}

SC_EXPORT ncclResult_t ncclScatter(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                   int root, ncclComm_t comm, cudaStream_t stream) {
    const int root_rank = root;
    CALL(bcast_fn, ncclScatter, sendbuff, recvbuff, count, datatype, root, comm, stream);
    DONE(root_ ? sendbuff : NULL, ranks(ci), recvbuff, 1); /* sendbuff is used on the root only */
}

SC_EXPORT ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
                                ncclComm_t comm, cudaStream_t stream) {
    const int root_rank = -1;
    CALL(p2p_fn, ncclSend, (void *)sendbuff, count, datatype, peer, comm, stream);
    DONE(sendbuff, 1, NULL, 0);
}

SC_EXPORT ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                                cudaStream_t stream) {
    const int root_rank = -1;
    CALL(p2p_fn, ncclRecv, recvbuff, count, datatype, peer, comm, stream);
    DONE(NULL, 0, recvbuff, 1);
}

SC_EXPORT ncclResult_t ncclGroupStart(void) {
    REAL(void_fn, ncclGroupStart);
    if (!fn_) return NCCL_INVALID_USAGE;
    ncclResult_t r = fn_();
    if (r == NCCL_SUCCESS) group_depth++;
    return r;
}

SC_EXPORT ncclResult_t ncclGroupEnd(void) {
    REAL(void_fn, ncclGroupEnd);
    if (!fn_) return NCCL_INVALID_USAGE;
    ncclResult_t r = fn_();
    /* NCCL ends the group whatever ncclGroupEnd returns. */
    if (group_depth > 0 && --group_depth == 0 && group_n) {
        int saved = errno;
        if (recording())
            flush_group(r);
        else
            group_n = 0;
        errno = saved;
    }
    return r;
}

/* The driver calls made from here to name_end are recorded under api's
 * name: returns the thread's state to give name_end, or NULL. */
static sc_tstate *name_begin(const char *api, _Atomic uint32_t *sid) {
    if (!recording()) return NULL;
    int saved = errno;
    sc_tstate *ts = sc_tls();
    if (ts && !ts->busy && !ts->api_sid) {
        uint32_t id = atomic_load_explicit(sid, memory_order_relaxed);
        if (!id) atomic_store(sid, id = sc_intern(api));
        ts->api_sid = id;
    } else {
        ts = NULL;
    }
    errno = saved;
    return ts;
}

static void name_end(sc_tstate *ts) {
    if (ts) ts->api_sid = 0;
}

SC_EXPORT ncclResult_t ncclMemAlloc(void **ptr, size_t size) {
    REAL(alloc_fn, ncclMemAlloc);
    if (!fn_) return NCCL_INVALID_USAGE;
    static _Atomic uint32_t sid;
    sc_tstate *ts = name_begin("ncclMemAlloc", &sid);
    ncclResult_t r = fn_(ptr, size);
    name_end(ts);
    return r;
}

SC_EXPORT ncclResult_t ncclMemFree(void *ptr) {
    REAL(free_fn, ncclMemFree);
    if (!fn_) return NCCL_INVALID_USAGE;
    static _Atomic uint32_t sid;
    sc_tstate *ts = name_begin("ncclMemFree", &sid);
    ncclResult_t r = fn_(ptr);
    name_end(ts);
    return r;
}

/* Ends a communicator with fn (NCCL's destroy or abort). */
static ncclResult_t end_comm(comm_fn fn, ncclComm_t comm) {
    if (!fn) return NCCL_INVALID_USAGE;
    ncclResult_t r = fn(comm);
    if (recording()) forget_comm(comm);
    return r;
}

SC_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
    REAL(comm_fn, ncclCommDestroy);
    return end_comm(fn_, comm);
}

SC_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
    REAL(comm_fn, ncclCommAbort);
    return end_comm(fn_, comm);
}

/* ---- lookup by name, for a dlsym hook ---- */

/* The wrappers: every function of NCCL_REALS but the communicator queries. */
static const struct {
    const char *name;
    void *fn;
    int id; /* in reals */
} wrappers[] = {
#define WRAPPER(name) {#name, (void *)name, NC_##name},
    WRAPPER(ncclAllReduce) WRAPPER(ncclReduce) WRAPPER(ncclBroadcast) WRAPPER(ncclBcast) WRAPPER(ncclAllGather)
    WRAPPER(ncclReduceScatter) WRAPPER(ncclAlltoAll) WRAPPER(ncclGather) WRAPPER(ncclScatter) WRAPPER(ncclSend)
    WRAPPER(ncclRecv) WRAPPER(ncclGroupStart) WRAPPER(ncclGroupEnd) WRAPPER(ncclMemAlloc) WRAPPER(ncclMemFree)
    WRAPPER(ncclCommDestroy) WRAPPER(ncclCommAbort)
#undef WRAPPER
};

static int wrapper_index(const char *name) {
    for (size_t i = 0; i < sizeof wrappers / sizeof wrappers[0]; i++)
        if (strcmp(wrappers[i].name, name) == 0) return (int)i;
    return -1;
}

static void *wrapper_of(const char *name) {
    int i = wrapper_index(name);
    return i < 0 ? NULL : wrappers[i].fn;
}

/* The wrapper of NCCL function name, or NULL: for a dlsym hook, so that a
 * program that dlopens libnccl and looks its functions up is recorded too. */
SC_EXPORT void *sc_nccl_lookup(const char *name) { return name ? wrapper_of(name) : NULL; }

/* What the shim's dlsym hands a program that looked name up in a library
 * handle and found f: the wrapper, calling f, if f is that NCCL function of
 * a libnccl (librccl) and the shim records; else f. */
void *sc_nccl_swap(const char *name, void *f) {
    if (!f || !name || !atomic_load_explicit(&sc_active, memory_order_relaxed)) return f;
    int i = wrapper_index(name);
    if (i < 0 || f == wrappers[i].fn) return f;
    int saved = errno;
    Dl_info di;
    int nccl = dladdr(f, &di) && di.dli_fname && is_nccl_path(di.dli_fname);
    errno = saved;
    if (!nccl) return f;
    void *none = NULL; /* a function found before stays: one NCCL per process */
    atomic_compare_exchange_strong(&reals[wrappers[i].id], &none, f);
    return wrappers[i].fn;
}
