/*
 * shim.h: internal interface between the C files of the recording shim.
 *
 * Threading model. One process-wide mutex (sc_lock) serializes everything
 * that writes the trace file or changes a definition table; it is held only
 * for table updates and the copy of a record into the mapped file, never
 * across a call into the CUDA driver, CUPTI or the dynamic loader's locks
 * that user code can hold. The hot lookups (stack ids, known streams, kernel
 * parameter layouts, API name ids) are lock-free reads of tables that are
 * only changed under sc_lock. The allocation map has its own writers' lock
 * and is read without one (a seqlock, allocmap.c).
 */
#ifndef STREAMCHECK_SHIM_H
#define STREAMCHECK_SHIM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cupti_abi.h"

/* 0.2: records pool attributes (pool_set_attr), allocation families and the
 * time inside synchronous allocations and frees (model.Process.RecordsPoolAttributes). */
#define SC_VERSION "streamcheck-intercept 0.3.0 (trace format 1)"
#define SC_EXPORT __attribute__((visibility("default")))
#define SC_HIDDEN __attribute__((visibility("hidden")))
/* The per-call path: GCC puts these functions side by side (.text.hot), so
 * that a call, which finds them out of the caches, reads few pages of code. */
#define SC_HOT __attribute__((hot))
/* Rare work, kept apart from the hot code (.text.unlikely). */
#define SC_COLD __attribute__((cold, noinline))
/* Code a sanitizer runtime may enter before it is initialized (the dlsym
 * the shim exports: ASan and TSan resolve their interceptors through dlsym
 * at start-up) must carry no instrumentation. */
#define SC_NOSAN __attribute__((no_sanitize_address, no_sanitize_thread, no_sanitize_undefined))

/* model.Op values and model.Flag* bits, generated from model/opspec.go. */
#include "ops.h"
#define SC_ALL_GRAPHS UINT64_MAX /* model.AllGraphs */

/* model.MemcpyKind */
enum { COPY_DEFAULT = 0, COPY_H2D, COPY_D2H, COPY_D2D, COPY_H2H };

/* Record kinds (docs/trace-format.md). */
enum {
    REC_END = 1,
    REC_STRING = 2,
    REC_STACK = 3,
    REC_MODULE = 4,
    REC_PROCESS = 5,
    REC_NAME = 6,
    REC_EVENT = 16,
};

#define SC_MAX_PTRS 4096       /* device addresses kept per launch */
#define SC_AGGREGATE_BYTES 512 /* a larger launch parameter is a table: no pointer slot, live allocations only (params.c) */
#define SC_MAX_STACK 128       /* hard cap on STREAMCHECK_STACK_DEPTH */
#define SC_MAX_STRING 65536    /* longer strings (kernel names) are cut */
#define SC_PAYLOAD_MAX (360 + SC_MAX_PTRS * 10) /* every field at its longest fits */

/* The fields of an event record after field 29 (dur, family, pitch,
 * height, attr, src_size, nranks): only synchronous allocations and frees,
 * the pool attribute calls and collectives have them, so they live apart from sc_event, which the
 * per-call path clears for every call. A decoder that sets them points
 * ev->ext at its thread's (sc_tstate.ext, filled by sc_ext_begin). */
typedef struct {
    uint64_t dur;           /* host ns inside the call (entry to exit), 0 not timed */
    uint64_t pitch, height; /* FAMILY_PITCHED: the row pitch returned and the rows */
    uint32_t family;        /* FAMILY_* (ops.h) */
    uint32_t attr;          /* OP_POOL_SET_ATTR: CUmemPool_attribute (value in sc_event.value) */
    uint64_t src_size;      /* OP_COLLECTIVE: the bytes read at src */
    uint32_t nranks;        /* OP_COLLECTIVE: the communicator's rank count */
    uint32_t live;          /* OP_LAUNCH with FLAG_RAW_WORDS: the last weak words that match live memory only */
} sc_ext;

/* One event as the handlers fill it; the trace writer adds seq and time. */
typedef struct {
    uint32_t op;
    int32_t device;
    uint32_t api;   /* string id */
    uint32_t stack; /* stack id */
    int32_t result;
    uint32_t nweak; /* OP_LAUNCH: how many of the last ptrs are weak matches (params.c) */
    uint64_t stream, event, ptr, size, src;
    uint32_t kind, flags;
    uint64_t pool;
    uint32_t kernel; /* string id */
    int32_t prio;
    uint32_t nptrs;
    const uint64_t *ptrs;
    uint64_t graph, exec; /* graph and executable graph handles (capture begin and end, graph ops) */
    int32_t peer_src, peer_dst; /* FLAG_PEER: the devices of the copy's source and destination */
    uint64_t node;              /* the graph node an OP_GRAPH_EVENT_*_NODE sets, an OP_GRAPH_FORGET destroys or changes */
    uint64_t value;             /* OP_STREAM_MEMOP: the value waited for or written */
    uint32_t memop, mem_flags;  /* OP_STREAM_MEMOP: CUDA's CUstreamBatchMemOpType and the operation's flags */
    const sc_ext *ext;          /* fields 30 on, or NULL: none (most events) */
} sc_event;

/* A launch's parameter words being looked up in the allocation map: they
 * are gathered in chunks and looked up a chunk at a time (params.c); or,
 * with sc_raw_words, kept as they are for the reader to match. */
#define SC_SCAN_CHUNK 512
typedef struct {
    uint64_t *out;  /* device addresses found: strong from the front, weak from the back */
    uint32_t n, nweak;
    int raw;        /* sc_raw_words: words kept unmatched, the table words in tab */
    uint64_t *tab;  /* raw: words of tables (live only) */
    uint32_t ntab;
    uint32_t words; /* looked up, for STREAMCHECK_STATS */
    uint32_t nw;    /* words gathered, not yet looked up */
    uint64_t lo, hi; /* the allocation map's bounds: only words within are gathered */
    uint64_t w[SC_SCAN_CHUNK];
    uint8_t live_only[SC_SCAN_CHUNK], weak[SC_SCAN_CHUNK], hit[SC_SCAN_CHUNK];
} sc_scan;

/* Per-thread state, allocated on a thread's first callback. */
typedef struct sc_stackcache sc_stackcache;
typedef struct {
    int busy;          /* reentrancy guard: inside our callback */
    uint32_t fork_gen; /* sc_fork_gen when tid was read */
    uint32_t tid;
    int rt_depth;      /* runtime API calls in progress on this thread */
    uint32_t rt_cbid;  /* outermost one's callback id */
    uint32_t api_sid;  /* nonzero: the API name of the driver calls made now (an NCCL call's, nccl.c) */
    CUcontext ctx;     /* single-entry context -> device cache */
    int32_t ctx_dev;
    int ctx_valid;
    sc_stackcache *stackcache; /* stacks.c */
    struct sc_pylines *pylines; /* pylines.c */
    uint32_t release_slot;     /* releases.c: 1 + this thread's slot, 0 none yet */
    sc_ext ext;                /* the current event's fields 30 on, when it has them (sc_event.ext) */
    uint64_t hostfn_token;     /* hostfn.c: the token of the host function this thread is enqueuing, 0 none */
    void *hostfn_rec;          /* and its record, if the call's parameters now name our trampoline */
    uint64_t ptrs[SC_MAX_PTRS];
    uint64_t sort_tmp[SC_MAX_PTRS]; /* scratch for sorting ptrs; a raw launch's table words (params.c) */
    uint8_t payload[SC_PAYLOAD_MAX];
    sc_scan scan;
} sc_tstate;

/* ---- lfmap.c: u64 -> u64 hash map, lock-free get, writes under sc_lock ---- */
typedef struct lftab lftab;
typedef struct {
    _Atomic(lftab *) tab;
    lftab *spare; /* the table the last rebuild or clear replaced, reused by the next (under sc_lock) */
} lfmap;
SC_HIDDEN int lfmap_get(lfmap *m, uint64_t key, uint64_t *val);
SC_HIDDEN int lfmap_put_locked(lfmap *m, uint64_t key, uint64_t val);
SC_HIDDEN void lfmap_del_locked(lfmap *m, uint64_t key);
SC_HIDDEN void lfmap_clear_locked(lfmap *m);

/* ---- tracefile.c: the writer, the lowest layer (it calls no other file) ---- */
extern _Atomic uint32_t sc_fork_gen;
SC_HIDDEN void sc_lock_acquire(void);
SC_HIDDEN void sc_lock_release(void);
SC_HIDDEN int sc_trace_setup(int eager); /* eager: create the file now, else on first use */
extern _Atomic int sc_trace_failed; /* this process's trace cannot be written */
SC_HIDDEN void sc_trace_finish(void);
SC_HIDDEN int sc_trace_writable_locked(void); /* opens the child's file lazily */
SC_HIDDEN int sc_trace_pending(void);         /* no file created yet (none needed so far), none failed */
SC_HIDDEN uint64_t sc_trace_bytes(void);      /* the trace's length and events so far (STREAMCHECK_STATS) */
SC_HIDDEN uint64_t sc_trace_events(void);
SC_HIDDEN int sc_append_locked(int kind, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);
/* An event is encoded outside sc_lock (fields 6 on, into p: room for
 * SC_PAYLOAD_MAX bytes), then appended under it with the fields the writer
 * gives it (seq, time); an event the file cannot take is counted dropped. */
SC_HIDDEN size_t sc_event_encode(uint8_t *p, const sc_event *e);
SC_HIDDEN void sc_event_append_locked(const sc_event *e, uint32_t tid, const uint8_t *tail, size_t tlen);
SC_HIDDEN void sc_events_dropped_locked(uint64_t n); /* not written: the file cannot be */
SC_HIDDEN void sc_atfork_prepare(void);
SC_HIDDEN void sc_atfork_parent(void);
SC_HIDDEN void sc_atfork_child(void);
SC_HIDDEN int64_t sc_now_ns(void); /* CLOCK_MONOTONIC */

/* What a layer above the writer does at the writer's moments; any may be
 * NULL. Registered at start, before the first file is opened (the recorder
 * registers every layer's, in the order below), in a fixed array: the fork
 * handlers allocate nothing. */
typedef struct {
    /* A file was opened (the first, or a forked child's): write again every
     * definition already made, with the same ids; 0 if the file could not
     * take them. In registration order: a definition's ids are defined
     * before it. */
    int (*replay_locked)(void);
    /* Then, after every replay, while the file is writable: the records a
     * new file starts with. */
    void (*opened_locked)(void);
    /* fork: prepare before the writer takes sc_lock (in reverse order),
     * parent and child after it lets go of it (in order). The child's run
     * with one thread and must not allocate. */
    void (*fork_prepare)(void);
    void (*fork_parent)(void);
    void (*fork_child)(void);
} sc_writer_hooks;
#define SC_MAX_WRITER_HOOKS 8
SC_HIDDEN int sc_writer_register(const sc_writer_hooks *h); /* 0 if the array is full */

/* ---- tables.c: strings ---- */
SC_HIDDEN uint32_t sc_intern_locked(const char *s, size_t n);
SC_HIDDEN uint32_t sc_intern(const char *s);
extern const sc_writer_hooks sc_strings_hooks; /* replay */

/* ---- modules.c ---- */
SC_HIDDEN void sc_modules_init_locked(void);
SC_HIDDEN uint32_t sc_module_of_locked(uint64_t pc);
extern const sc_writer_hooks sc_modules_hooks; /* replay; the first scan when a file opens */
SC_HIDDEN void sc_module_range_of(const void *addr, uint64_t *lo, uint64_t *hi, char *path, size_t pathlen);

/* ---- stacks.c ---- */
extern int sc_stack_depth;
SC_HIDDEN void sc_stacks_init(void);
SC_HIDDEN void sc_stacks_add_trim_range(uint64_t lo, uint64_t hi);
SC_HIDDEN uint32_t sc_stack_capture(sc_tstate *ts);
SC_HIDDEN void sc_stack_cache_free(sc_tstate *ts);
extern const sc_writer_hooks sc_stacks_hooks; /* replay */

/* ---- pytramp.c ---- */
extern int sc_python_callers; /* STREAMCHECK_PYTHON_CALLERS, default 1 */
/* Registers unwind information for the CPython trampolines around pc, where
 * a walk stopped; 1 if a walk through pc would now go further. */
SC_HIDDEN int sc_pytramp_register(uint64_t pc);
extern const sc_writer_hooks sc_pytramp_hooks; /* fork */
extern _Atomic int sc_pytramp_count; /* trampoline mappings registered */
SC_HIDDEN int sc_pytramp_contains(uint64_t pc); /* pc is in a registered trampoline mapping */

/* ---- pylines.c ---- */
extern int sc_python_lines_on; /* STREAMCHECK_PYTHON_LINES, default 1 */
/* Fills line[i] with the line that the i-th Python function on the calling
 * thread's stack (innermost first) is executing; tramp_pc[i] is the return
 * address in that function's trampoline. Returns how many it filled. */
SC_HIDDEN int sc_python_lines(sc_tstate *ts, const uint64_t *tramp_pc, int n, uint32_t *line);
SC_HIDDEN void sc_python_lines_free(sc_tstate *ts);

/* The end of the range of size bytes at base, as the allocation map keeps
 * it: a size of 0 counts as 1, and a range past the top ends there. */
static inline uint64_t sc_range_end(uint64_t base, uint64_t size) {
    if (size == 0) size = 1;
    return base + size < base ? UINT64_MAX : base + size;
}

/* ---- allocmap.c ---- */
/* host: pinned or registered host memory (a unified-address copy's host side) */
SC_HIDDEN void sc_alloc_add(uint64_t base, uint64_t size, int host);
SC_HIDDEN void sc_alloc_free(uint64_t base);
SC_HIDDEN void sc_alloc_free_range(uint64_t lo, uint64_t hi); /* every live range starting in [lo, hi): an unmap */
/* live or recently freed: 0 not in the map, SC_ALLOC_DEVICE, or SC_ALLOC_HOST for host memory */
enum { SC_ALLOC_DEVICE = 1, SC_ALLOC_HOST = 2 };
SC_HIDDEN int sc_alloc_contains(uint64_t addr);
SC_HIDDEN uint64_t sc_alloc_end_of(uint64_t base); /* the end of the live range starting at base, else base + 1 */
SC_HIDDEN void sc_alloc_bounds(uint64_t *lo, uint64_t *hi); /* [lo, hi) holds every range */
/* hit[i] = w[i] is in a live range, or in a recently freed one unless live_only[i]. */
SC_HIDDEN void sc_alloc_lookup(const uint64_t *w, const uint8_t *live_only, uint8_t *hit, size_t n);
extern const sc_writer_hooks sc_allocmap_hooks; /* fork: the writers' lock held across it */

/* ---- releases.c: a free or destroy recorded before what reuses its memory or handle ---- */
enum { SC_REL_MEMORY = 1, SC_REL_STREAM, SC_REL_EVENT };
/* In the table only (sc_drv_info.release): cuMemUnmap, announced as
 * SC_REL_MEMORY of the range its parameters name. */
#define SC_REL_UNMAP 4
SC_HIDDEN void sc_release_begin(sc_tstate *ts, uint32_t kind, uint64_t lo, uint64_t hi); /* at the call's entry */
SC_HIDDEN void sc_release_end(sc_tstate *ts);    /* at its exit, once its event is in the trace */
SC_HIDDEN void sc_release_forget(sc_tstate *ts); /* thread exit */
/* Before recording an allocation of [lo, hi) or a create of handle lo (hi = lo + 1). */
SC_HIDDEN void sc_release_wait(sc_tstate *ts, uint32_t kind, uint64_t lo, uint64_t hi);
extern const sc_writer_hooks sc_releases_hooks; /* fork */
extern _Atomic uint64_t sc_stat_release_waits;

/* ---- params.c ---- */
/* Modules were unloaded: function handles may name other kernels from now on. */
SC_HIDDEN void sc_layouts_forget(void);
SC_HIDDEN const char *sc_kernel_name(CUfunction f); /* from the driver, or NULL */
/* Fills ts->ptrs with the addresses found, the weak matches last: returns
 * how many in all, *nweak the weak ones. */
SC_HIDDEN void sc_launch_scan(sc_tstate *ts, CUfunction f, const char *symbol, void **kernelParams, void **extra,
                               sc_event *ev);

/* ---- loader.c: driver entry points looked up in libcuda (may be NULL) ---- */
typedef struct {
    CUresult (*cuKernelGetParamInfo)(CUkernel, size_t, size_t *, size_t *);
    CUresult (*cuFuncGetParamInfo)(CUfunction, size_t, size_t *, size_t *);
    CUresult (*cuCtxGetDevice)(CUdevice *);
    CUresult (*cuStreamGetFlags)(CUstream, unsigned int *);
    CUresult (*cuStreamGetPriority)(CUstream, int *);
    CUresult (*cuPointerGetAttribute)(void *, int, CUdeviceptr);
    CUresult (*cuGraphNodeGetContainingGraph)(CUgraphNode, CUgraph *); /* CUDA 13.1 and later */
    CUresult (*cuFuncGetName)(const char **, CUfunction);               /* CUDA 12.3 and later */
    CUresult (*cuKernelGetName)(const char **, CUkernel);
    /* cuStreamGetCaptureInfo_v3 (CUDA 12.3 and later; with edge data) or
     * _v2, which differ after graph_out: only the first four are passed. */
    CUresult (*cuStreamGetCaptureInfo_v3)(CUstream, int *, uint64_t *, CUgraph *, const void **, const void **,
                                          size_t *);
    CUresult (*cuStreamGetCaptureInfo_v2)(CUstream, int *, uint64_t *, CUgraph *, const void **, size_t *);
    CUresult (*cuDeviceGetCount)(int *);
    CUresult (*cuDeviceGetDefaultMemPool)(CUmemoryPool *, CUdevice); /* CUDA 11.2 and later */
    CUresult (*cuCtxGetCurrent)(CUcontext *);
    CUresult (*cuLaunchHostFunc)(CUstream, void (*)(void *), void *); /* STREAMCHECK_HOSTFN=marker's */
} sc_driver_fns;
extern sc_driver_fns sc_drv;

/* ---- interpose.c: the interposition backend ---- */
/* Starts recording through the wrappers, whose real entry points are
 * looked up in libcuda (a dlopen handle); 0 and why in err if it cannot. */
SC_HIDDEN int sc_interpose_setup(void *libcuda, char *err, size_t errlen);
SC_HIDDEN void *sc_dlsym_real(void *handle, const char *name); /* glibc's dlsym, not the shim's */
/* nccl.c: what dlsym hands out for name, found as f in a library handle:
 * f, or the shim's wrapper of that NCCL function, which then calls f. */
SC_HIDDEN void *sc_nccl_swap(const char *name, void *f);
/* cuGetProcAddress results swapped for a wrapper by address and by name,
 * and dlsym lookups in libcuda swapped. */
extern _Atomic uint64_t sc_stat_gpa_swapped, sc_stat_gpa_by_name, sc_stat_dlsym_swapped;
/* With STREAMCHECK_STATS=1: cuGetProcAddress calls through the shim, those
 * the driver failed, and the name the first swapped dlsym lookup asked for. */
extern _Atomic uint64_t sc_stat_gpa_calls, sc_stat_gpa_failed;
extern char sc_stat_first_dlsym[64];
/* cuGetProcAddress looked up in another library than libcuda, and the first such library. */
extern _Atomic uint64_t sc_stat_foreign_gpa;
extern char sc_stat_foreign_gpa_lib[128];
/* Whether the program called the shim's cuGetProcAddress or its cuInit
 * (directly, or found with dlsym): a process that initialized CUDA without
 * either got its entry points elsewhere. */
SC_HIDDEN int sc_interpose_reached(void);
/* loader.c: the interpose backend starts (opens libcuda) when the process
 * first reaches the driver through the shim; sc_interpose_ensure, at each
 * such place, starts it if it waits to. */
enum { SC_IP_NONE, SC_IP_PENDING, SC_IP_STARTING, SC_IP_STARTED };
extern _Atomic int sc_ip_state;
/* what: the way the process reached the driver, for STREAMCHECK_STATS
 * ("cuInit", "dlsym of" with name "cuGetProcAddress_v2"); name may be NULL. */
SC_HIDDEN void sc_interpose_start_pending(const char *what, const char *name);
/* Whether the interpose backend waits to start (or is starting). */
static inline int sc_interpose_waiting(void) {
    int s = atomic_load_explicit(&sc_ip_state, memory_order_acquire);
    return s == SC_IP_PENDING || s == SC_IP_STARTING;
}
static inline void sc_interpose_ensure(const char *what, const char *name) {
    if (__builtin_expect(sc_interpose_waiting(), 0)) sc_interpose_start_pending(what, name);
}
/* The driver library the shim opens: STREAMCHECK_LIBCUDA, else libcuda.so.1. */
SC_HIDDEN const char *sc_driver_path(void);
/* Whether a dlopen handle is libcuda's (by its object's name). */
SC_HIDDEN int sc_is_driver_handle(void *handle);
/* The backend recording ("cupti" or "interpose"), for the trace. */
extern const char *sc_backend;

/* ---- recorder.c: the layer the backends feed, above the writer ---- */
extern _Atomic int sc_active; /* the backends should record */
extern int sc_callback_only;  /* Record nothing: measure the backend's own cost. */
/* Registers every layer's writer hooks, in their order: before the trace
 * is set up. */
SC_HIDDEN void sc_recorder_init(void);
SC_HIDDEN sc_tstate *sc_tls(void);
/* Records ev (and, before it, the implicit create of a stream first seen in
 * use). Called with ts->busy set, without sc_lock. */
SC_HIDDEN void sc_emit(sc_tstate *ts, sc_event *ev);

/* ---- callbacks.c (the CUPTI backend), apitable.c (the table of driver functions), stats.c ---- */
/* STREAMCHECK_STATS=1: count and time our own work, print at exit. */
extern int sc_stats;
extern int sc_raw_words; /* launches carry their parameter words unmatched (params.c) */
/* Times are in sc_stat_clock units; sc_stat_ns_per_unit converts them. */
extern _Atomic uint64_t sc_stat_handler_time, sc_stat_handled, sc_stat_stack_hits, sc_stat_stack_unwinds;
/* Frames walked by the unwinds, and the time the unwinds took (sc_stat_clock units). */
extern _Atomic uint64_t sc_stat_unwound_frames, sc_stat_unwind_time;
/* Launches scanned for device addresses: words looked up, time taken, words written raw. */
extern _Atomic uint64_t sc_stat_launches, sc_stat_scan_words, sc_stat_scan_time, sc_stat_raw_words;
/* Where walks stopped at a possible CPython trampoline (pytramp.c): reads of
 * /proc/self/maps and their time; trampoline code ranges registered. */
extern _Atomic uint64_t sc_stat_maps_reads, sc_stat_maps_time, sc_stat_tramp_ranges;
SC_HIDDEN int64_t sc_stat_clock(void);
SC_HIDDEN void sc_stat_begin(void);
SC_HIDDEN double sc_stat_ns_per_unit(void);
/* Phases of a handled call, timed with STREAMCHECK_STATS=1: decoding the
 * parameters (and scanning a launch's words), the call stack, writing the
 * event, updating the allocation map. */
enum { SC_PHASE_DECODE, SC_PHASE_STACK, SC_PHASE_EMIT, SC_PHASE_MAP, SC_NPHASES };
extern _Atomic uint64_t sc_stat_phase_time[SC_NPHASES];
extern _Atomic uint64_t sc_stat_hostfn_wrapped, sc_stat_hostfn_ran; /* hostfn.c: host functions wrapped, runs seen */
SC_HIDDEN void sc_hostfn_init(void); /* hostfn.c: reads STREAMCHECK_HOSTFN */
extern _Atomic uint64_t sc_stat_prefaulted; /* trace bytes faulted in ahead by the helper thread */
extern _Atomic int sc_stat_prefault_started;
SC_HIDDEN void sc_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *cbdata);
SC_HIDDEN int sc_callbacks_setup(CUptiResult (*get_name)(CUpti_CallbackDomain, uint32_t, const char **),
                                 CUptiResult (*enable)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId),
                                 CUpti_SubscriberHandle sub, char *err, size_t errlen);
SC_HIDDEN const char *sc_display_name(const char *fn, char *buf, size_t n);

/* ---- varint encoding (docs/trace-format.md: uvarint = LEB128, svarint = zig-zag) ---- */
static inline size_t sc_put_uvarint(uint8_t *p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}
static inline uint64_t sc_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline size_t sc_put_svarint(uint8_t *p, int64_t v) { return sc_put_uvarint(p, sc_zigzag(v)); }

#endif
