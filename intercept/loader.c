//go:build ignore

/*
 * loader.c: how the shim starts, finds CUPTI and the driver, and stops.
 *
 * Two ways in:
 *  - CUDA_INJECTION64_PATH=libstreamcheck.so: the driver dlopens us during
 *    cuInit and calls InitializeInjection (primary path).
 *  - LD_PRELOAD=libstreamcheck.so with STREAMCHECK_PRELOAD=1: the library
 *    constructor subscribes at load (for programs where the injection
 *    variable is unwelcome). Without STREAMCHECK_PRELOAD=1 the constructor
 *    does nothing, so the library is inert when preloaded by accident.
 * Both may happen in one process; the second is a no-op.
 *
 * Nothing here may change the program's behaviour: no abort, no exit, no
 * visible errno change, no CUDA result altered. When CUPTI cannot be loaded
 * or subscribed we say so in one line on stderr and leave a marker file
 * <dir>/streamcheck-<pid>.error holding the reason, for `streamcheck run`.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

sc_driver_fns sc_drv;

static struct {
    CUptiResult (*subscribe)(CUpti_SubscriberHandle *, sc_CUpti_CallbackFunc, void *);
    CUptiResult (*enable_callback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
    CUptiResult (*get_callback_name)(CUpti_CallbackDomain, uint32_t, const char **);
    CUptiResult (*get_result_string)(CUptiResult, const char **);
} cupti;

static _Atomic int started;
static CUpti_SubscriberHandle subscriber;
static char cupti_path[PATH_MAX];

/* Says why nothing is recorded: in a marker file that `streamcheck run` and
 * `record` read and report, and on stderr, unless the launcher said it
 * reports markers itself (STREAMCHECK_LAUNCHER=1) and the marker was
 * written: the user should read the reason once, not twice. */
static int reported; /* this process said why it does not record */

/* The path of this process's marker <dir>/streamcheck-PID.<what>. */
static void marker_path(char *path, size_t len, const char *dir, const char *what) {
    snprintf(path, len, "%s/streamcheck-%d.%s", dir, (int)getpid(), what);
}

static void report_error(const char *reason) {
    reported = 1;
    const char *d = getenv("STREAMCHECK_DIR");
    char path[PATH_MAX + 64];
    marker_path(path, sizeof path, d && *d ? d : ".", "error");
    int marked = 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
        marked = dprintf(fd, "%s\n", reason) > 0;
        close(fd);
    }
    const char *l = getenv("STREAMCHECK_LAUNCHER");
    if (!marked || !l || strcmp(l, "1") != 0) dprintf(2, "streamcheck: cannot record CUDA calls: %s\n", reason);
}

/* ---- finding libcupti ---- */

static int try_cupti(const char *path) {
    if (!path || !*path) return 0;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) return 0;
    void *sub = dlsym(h, "cuptiSubscribe");
    void *en = dlsym(h, "cuptiEnableCallback");
    void *nm = dlsym(h, "cuptiGetCallbackName");
    if (!sub || !en || !nm) {
        dlclose(h);
        return 0;
    }
    cupti.subscribe = (CUptiResult(*)(CUpti_SubscriberHandle *, sc_CUpti_CallbackFunc, void *))sub;
    cupti.enable_callback =
        (CUptiResult(*)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId))en;
    cupti.get_callback_name = (CUptiResult(*)(CUpti_CallbackDomain, uint32_t, const char **))nm;
    cupti.get_result_string = (CUptiResult(*)(CUptiResult, const char **))dlsym(h, "cuptiGetResultString");
    snprintf(cupti_path, sizeof cupti_path, "%s", path);
    return 1;
}

static const char *const cupti_names[] = {"libcupti.so", "libcupti.so.13", "libcupti.so.12"};

static int try_cupti_dir(const char *dir) {
    if (!dir || !*dir) return 0;
    char p[PATH_MAX];
    for (size_t i = 0; i < sizeof cupti_names / sizeof cupti_names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, cupti_names[i]);
        if (try_cupti(p)) return 1;
    }
    return 0;
}

static int find_cudart(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    const char *n = info->dlpi_name;
    if (n && strstr(n, "/libcudart.so")) {
        snprintf(data, PATH_MAX, "%s", n);
        return 1;
    }
    return 0;
}

static int find_loaded_cupti(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    const char *n = info->dlpi_name;
    if (n && strstr(n, "/libcupti.so")) {
        snprintf(data, PATH_MAX, "%s", n);
        return 1;
    }
    return 0;
}

static int search_cupti(void);

/* Loads libcupti: STREAMCHECK_CUPTI first (a file or a directory), then
 * the search. A STREAMCHECK_CUPTI that cannot be loaded is named, in the
 * error when nothing else is found, in a warning when something else is. */
static int load_cupti(char *err, size_t errlen) {
    const char *want = getenv("STREAMCHECK_CUPTI");
    char why[PATH_MAX + 256] = "";
    if (want && *want) {
        struct stat st;
        if (stat(want, &st) == 0 && S_ISDIR(st.st_mode)) {
            if (try_cupti_dir(want)) return 1;
            snprintf(why, sizeof why, "STREAMCHECK_CUPTI=%s holds no loadable libcupti.so, libcupti.so.13 or libcupti.so.12", want);
        } else {
            if (try_cupti(want)) return 1;
            const char *e = dlerror(); /* names the path itself */
            if (e)
                snprintf(why, sizeof why, "STREAMCHECK_CUPTI cannot be loaded: %s", e);
            else
                snprintf(why, sizeof why, "STREAMCHECK_CUPTI=%s lacks the CUPTI callback API", want);
        }
    }
    if (search_cupti()) {
        if (why[0]) dprintf(2, "streamcheck: warning: %s; using %s\n", why, cupti_path);
        return 1;
    }
    /* With a setting, its reason says more than the search's last dlerror. */
    const char *e = why[0] ? NULL : dlerror();
    snprintf(err, errlen,
             "%s%slibcupti not found (tried libcupti.so, libcupti.so.13, libcupti.so.12, $CUDA_HOME/lib64, "
             "$CUDA_PATH/lib64, /usr/local/cuda, and beside libcudart%s)%s%s",
             why, why[0] ? "; and " : "", why[0] ? "" : "; set STREAMCHECK_CUPTI to its path", e ? ": " : "", e ? e : "");
    return 0;
}

static int search_cupti(void) {
    /* A libcupti the program already loaded (PyTorch's, say) comes first:
     * two copies of CUPTI in one process would fight over the driver. */
    char loaded[PATH_MAX] = "";
    dl_iterate_phdr(find_loaded_cupti, loaded);
    if (loaded[0] && try_cupti(loaded)) return 1;
    for (size_t i = 0; i < sizeof cupti_names / sizeof cupti_names[0]; i++)
        if (try_cupti(cupti_names[i])) return 1;
    char dir[PATH_MAX];
    const char *env[] = {"CUDA_HOME", "CUDA_PATH"};
    for (int i = 0; i < 2; i++) {
        const char *e = getenv(env[i]);
        if (e && *e) {
            snprintf(dir, sizeof dir, "%s/lib64", e);
            if (try_cupti_dir(dir)) return 1;
        }
    }
    if (try_cupti_dir("/usr/local/cuda/lib64") || try_cupti_dir("/usr/local/cuda/extras/CUPTI/lib64")) return 1;
    /* Beside an already loaded libcudart (pip wheels: nvidia/cu13/lib, or
     * nvidia/cuda_runtime/lib with CUPTI in nvidia/cuda_cupti/lib). */
    char rt[PATH_MAX] = "";
    dl_iterate_phdr(find_cudart, rt);
    if (rt[0]) {
        char *slash = strrchr(rt, '/');
        if (slash) {
            *slash = 0;
            if (try_cupti_dir(rt)) return 1;
            snprintf(dir, sizeof dir, "%s/../../cuda_cupti/lib", rt);
            if (try_cupti_dir(dir)) return 1;
        }
    }
    return 0;
}

/* ---- libcuda entry points for our own queries ---- */

const char *sc_driver_path(void) {
    const char *path = getenv("STREAMCHECK_LIBCUDA");
    return path && *path ? path : "libcuda.so.1";
}

/* Returns 0 when there is no driver library to load; then, if
 * STREAMCHECK_LIBCUDA named it, why is in why. The library's handle goes
 * in sc_libcuda. */
static void *sc_libcuda;
static int load_driver(char *why, size_t whylen) {
    const char *path = sc_driver_path();
    const char *set = getenv("STREAMCHECK_LIBCUDA");
    int named = set && *set;
    /* One search: an object already loaded is found by it (its flags stay
     * as they were), and a machine without a driver pays for one failed
     * search of the library path, in every process the shim is preloaded
     * into (bench/process-tree.sh). */
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        if (named) {
            const char *e = dlerror();
            snprintf(why, whylen, "STREAMCHECK_LIBCUDA cannot be loaded: %s", e ? e : path);
        }
        return 0;
    }
    sc_libcuda = h;
#define dlsym sc_dlsym_real /* libcuda's own entry points, never the shim's wrappers */
    sc_drv.cuKernelGetParamInfo = (CUresult(*)(CUkernel, size_t, size_t *, size_t *))dlsym(h, "cuKernelGetParamInfo");
    sc_drv.cuFuncGetParamInfo = (CUresult(*)(CUfunction, size_t, size_t *, size_t *))dlsym(h, "cuFuncGetParamInfo");
    sc_drv.cuCtxGetDevice = (CUresult(*)(CUdevice *))dlsym(h, "cuCtxGetDevice");
    sc_drv.cuStreamGetFlags = (CUresult(*)(CUstream, unsigned int *))dlsym(h, "cuStreamGetFlags");
    sc_drv.cuStreamGetPriority = (CUresult(*)(CUstream, int *))dlsym(h, "cuStreamGetPriority");
    sc_drv.cuPointerGetAttribute = (CUresult(*)(void *, int, CUdeviceptr))dlsym(h, "cuPointerGetAttribute");
    sc_drv.cuGraphNodeGetContainingGraph =
        (CUresult(*)(CUgraphNode, CUgraph *))dlsym(h, "cuGraphNodeGetContainingGraph");
    sc_drv.cuFuncGetName = (CUresult(*)(const char **, CUfunction))dlsym(h, "cuFuncGetName");
    sc_drv.cuKernelGetName = (CUresult(*)(const char **, CUkernel))dlsym(h, "cuKernelGetName");
    sc_drv.cuStreamGetCaptureInfo_v3 =
        (CUresult(*)(CUstream, int *, uint64_t *, CUgraph *, const void **, const void **, size_t *))dlsym(
            h, "cuStreamGetCaptureInfo_v3");
    sc_drv.cuStreamGetCaptureInfo_v2 = (CUresult(*)(CUstream, int *, uint64_t *, CUgraph *, const void **, size_t *))dlsym(
        h, "cuStreamGetCaptureInfo_v2");
    sc_drv.cuDeviceGetCount = (CUresult(*)(int *))dlsym(h, "cuDeviceGetCount");
    sc_drv.cuDeviceGetDefaultMemPool = (CUresult(*)(CUmemoryPool *, CUdevice))dlsym(h, "cuDeviceGetDefaultMemPool");
    sc_drv.cuLaunchHostFunc = (CUresult(*)(CUstream, void (*)(void *), void *))dlsym(h, "cuLaunchHostFunc");
    sc_drv.cuCtxGetCurrent = (CUresult(*)(CUcontext *))dlsym(h, "cuCtxGetCurrent");
#undef dlsym
    return 1;
}

/* Frames in these objects are the machinery between the program and us. */
static void add_trim(const void *addr) {
    if (!addr) return;
    uint64_t lo, hi;
    sc_module_range_of(addr, &lo, &hi, NULL, 0);
    sc_stacks_add_trim_range(lo, hi);
}

static int trim_cudart(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    (void)data;
    const char *n = info->dlpi_name;
    if (n && strstr(n, "/libcudart.so") && info->dlpi_phnum > 0) {
        for (int i = 0; i < info->dlpi_phnum; i++)
            if (info->dlpi_phdr[i].p_type == PT_LOAD) {
                add_trim((const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr));
                break;
            }
    }
    return 0;
}

/* ---- start and stop ---- */

const char *sc_backend = "cupti";

/* STREAMCHECK_BACKEND: 1 cupti, 2 interpose, 0 neither (why in err).
 * Unset, interpose when preloaded (the default: it costs less and leaves
 * CUPTI to profilers), else cupti: loaded by the driver
 * (CUDA_INJECTION64_PATH), the shim comes too late to stand in for entry
 * points the program already holds. */
static int choose_backend(int preloaded, char *err, size_t errlen) {
    const char *b = getenv("STREAMCHECK_BACKEND");
    if (!b || !*b) return preloaded ? 2 : 1;
    if (strcmp(b, "cupti") == 0) return 1;
    if (strcmp(b, "interpose") == 0) return 2;
    snprintf(err, errlen, "STREAMCHECK_BACKEND=%s: not interpose or cupti", b);
    return 0;
}

/* What both backends share once one records: the trace and the fork
 * handlers; frames of the shim, CUPTI, libcuda and libcudart are trimmed
 * from the recorded stacks. */
static void start_recording(int eager_file, const void *backend_code) {
    add_trim((const void *)sc_callback);
    add_trim(backend_code);
    add_trim((const void *)sc_drv.cuCtxGetDevice);
    dl_iterate_phdr(trim_cudart, NULL);
    sc_trace_setup(eager_file);
    static int atfork_done;
    if (!atfork_done) {
        atfork_done = 1;
        pthread_atfork(sc_atfork_prepare, sc_atfork_parent, sc_atfork_child);
    }
}

/* ---- the interpose backend, started when the process reaches CUDA ----
 *
 * Preloaded, the shim is in every process of the traced program's tree:
 * shells, compilers, test runners, most of which never touch CUDA. Opening
 * libcuda in each of them would cost every process the driver library's
 * load (or, without a driver, a failed search of the library path:
 * bench/process-tree.sh). So the interpose backend opens it only when the
 * process first reaches the driver through the shim: a wrapper called, its
 * cuGetProcAddress or cuInit, a dlsym on a libcuda handle, an NCCL lookup
 * or call (interpose.c and nccl.c call sc_interpose_ensure). A program
 * that has libcuda loaded when the shim starts (linked against it) starts
 * at once. */

_Atomic int sc_ip_state; /* SC_IP_NONE: the interpose backend does not wait to start */
static __thread int ip_starting_here __attribute__((tls_model("initial-exec"))); /* this thread is starting it: a reentry from libcuda's constructors */

/* The base name the shim opens libcuda by. */
static const char *driver_base(void) {
    const char *path = sc_driver_path();
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Whether an object of that name is libcuda: the shim's name for it, or
 * libcuda.so with any suffix. */
static int is_driver_name(const char *path) {
    if (!path || !*path) return 0;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    return strcmp(base, driver_base()) == 0 || strncmp(base, "libcuda.so", 10) == 0;
}

static int find_driver(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    if (!is_driver_name(info->dlpi_name)) return 0;
    if (data) snprintf(data, PATH_MAX, "%s", info->dlpi_name);
    return 1;
}

/* Whether libcuda is loaded in this process, and its path in path
 * (PATH_MAX bytes) if path is not NULL. Reads the loader's list only: no
 * search of the file system. */
static int driver_loaded(char *path) { return dl_iterate_phdr(find_driver, path) != 0; }

/* The object's name is copied by hand, uninstrumented: the dynamic loader
 * wrote it under its own lock, which a thread sanitizer does not see (the
 * handle came from a dlopen that took that lock after the write). */
SC_NOSAN int sc_is_driver_handle(void *handle) {
    struct link_map *lm = NULL;
    int saved = errno;
    char name[PATH_MAX];
    size_t n = 0;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name)
        for (const volatile char *c = lm->l_name; *c && n < sizeof name - 1; c++) name[n++] = *c;
    name[n] = 0;
    errno = saved;
    return is_driver_name(name);
}

/* Opens libcuda and starts the wrappers recording. */
static void interpose_start(int eager_file) {
    char why[PATH_MAX + 256] = "", err[256];
    int have_driver = load_driver(why, sizeof why);
    if (why[0]) {
        report_error(why);
        return;
    }
    if (!have_driver) return; /* no driver: no CUDA call to record */
    if (!sc_interpose_setup(sc_libcuda, err, sizeof err)) {
        report_error(err);
        return;
    }
    start_recording(eager_file, (const void *)sc_interpose_setup);
}

/* How long a thread waits for another that is starting the backend. The
 * starter may wait for a lock the waiter holds (the loader's, in a library
 * constructor that calls CUDA): then the waiter goes on unrecorded. */
#define IP_WAIT_NS 1000000000L

/* How the backend started, for STREAMCHECK_STATS: "at load", or what the
 * process reached the driver by. Written once, by the starter. */
static char ip_started_by[96] = "never";

void sc_interpose_start_pending(const char *what, const char *name) {
    int s = atomic_load_explicit(&sc_ip_state, memory_order_acquire);
    if (s == SC_IP_NONE || s == SC_IP_STARTED || ip_starting_here) return;
    int want = SC_IP_PENDING;
    if (atomic_compare_exchange_strong(&sc_ip_state, &want, SC_IP_STARTING)) {
        int saved = errno;
        snprintf(ip_started_by, sizeof ip_started_by, "on first use: %s%s%s", what, name ? " " : "", name ? name : "");
        ip_starting_here = 1;
        interpose_start(0);
        ip_starting_here = 0;
        atomic_store_explicit(&sc_ip_state, SC_IP_STARTED, memory_order_release);
        errno = saved;
        return;
    }
    int saved = errno;
    for (long waited = 0; waited < IP_WAIT_NS && atomic_load(&sc_ip_state) == SC_IP_STARTING; waited += 20000) {
        struct timespec d = {0, 20000};
        nanosleep(&d, NULL);
    }
    errno = saved;
}

/* A child forked while another thread was starting the backend starts it
 * itself: that thread is not in the child. */
static void ip_atfork_child(void) {
    int s = SC_IP_STARTING;
    if (!ip_starting_here) atomic_compare_exchange_strong(&sc_ip_state, &s, SC_IP_PENDING);
}

/* preloaded: started by the constructor of a preloaded shim, so that its
 * exported entry points stand in for the driver's. */
static void start(int eager_file, int preloaded) {
    if (atomic_exchange(&started, 1)) return;
    int saved = errno;
    char err[PATH_MAX + 1024]; /* room for a STREAMCHECK_CUPTI path and the search */
    sc_stacks_init();
    sc_recorder_init();
    const char *st = getenv("STREAMCHECK_STATS");
    sc_stats = st && strcmp(st, "1") == 0;
    const char *rw = getenv("STREAMCHECK_RAW_WORDS");
    sc_raw_words = !(rw && strcmp(rw, "0") == 0);
    if (sc_stats) sc_stat_begin();
    /* STREAMCHECK_CALLBACK_ONLY=1 subscribes (or interposes) but records
     * nothing: it measures what the backend alone costs (bench/gpu-overhead.sh). */
    const char *co = getenv("STREAMCHECK_CALLBACK_ONLY");
    sc_callback_only = co && strcmp(co, "1") == 0;
    sc_hostfn_init();
    int backend = choose_backend(preloaded, err, sizeof err);
    if (!backend) {
        report_error(err);
        goto out;
    }
    if (backend == 2 && !preloaded) {
        /* Loaded by the driver (CUDA_INJECTION64_PATH): too late to stand in
         * for entry points the program already holds. */
        dprintf(2, "streamcheck: warning: the interpose backend needs the shim preloaded (LD_PRELOAD with "
                   "STREAMCHECK_PRELOAD=1); recording with CUPTI\n");
        backend = 1;
    }
    if (backend == 2) {
        sc_backend = "interpose";
        sc_trace_setup(0); /* the directory, before the first wrapper records */
        if (eager_file || driver_loaded(NULL)) {
            snprintf(ip_started_by, sizeof ip_started_by, "at load (libcuda already loaded)");
            interpose_start(eager_file);
            atomic_store(&sc_ip_state, SC_IP_STARTED);
        } else {
            pthread_atfork(NULL, NULL, ip_atfork_child);
            atomic_store(&sc_ip_state, SC_IP_PENDING);
        }
        goto out;
    }
    char driver_why[PATH_MAX + 256] = "";
    int have_driver = load_driver(driver_why, sizeof driver_why);
    if (!load_cupti(err, sizeof err)) {
        /* Preloaded on a machine without the CUDA driver, a process can
         * make no CUDA call: nothing to record, and nothing to complain of
         * (`streamcheck run --preload -- true` says no CUDA activity was
         * recorded). The driver itself loads us for CUDA_INJECTION64_PATH. */
        if (have_driver || eager_file) report_error(err);
        goto out;
    }
    /* A driver library that was named but cannot be loaded leaves the
     * shim without its own queries (kernel parameters, stream flags):
     * recording would go on and lose findings without a word. */
    if (driver_why[0]) {
        report_error(driver_why);
        goto out;
    }
    CUptiResult r = cupti.subscribe(&subscriber, sc_callback, NULL);
    if (r != CUPTI_SUCCESS) {
        const char *s = NULL;
        if (cupti.get_result_string) cupti.get_result_string(r, &s);
        snprintf(err, sizeof err, "cuptiSubscribe failed: %s (error %d; is another profiler or CUPTI tool attached?)",
                 s ? s : "unknown error", r);
        report_error(err);
        goto out;
    }
    start_recording(eager_file, (const void *)cupti.subscribe);
    if (!sc_callbacks_setup(cupti.get_callback_name, cupti.enable_callback, subscriber, err, sizeof err))
        report_error(err);
out:
    errno = saved;
}

/* Called by the CUDA driver when CUDA_INJECTION64_PATH names this library.
 * Returns 1: the driver goes on either way, and we never fail the program. */
SC_EXPORT int InitializeInjection(void) {
    start(1, 0);
    return 1;
}

/* Creates the empty file <dir>/streamcheck-PID.<what>. */
static void mark(const char *what) {
    const char *d = getenv("STREAMCHECK_DIR");
    if (!d || !*d) return;
    char path[PATH_MAX + 64];
    marker_path(path, sizeof path, d, what);
    int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) close(fd);
}

#ifndef CUDA_ERROR_NOT_INITIALIZED
#define CUDA_ERROR_NOT_INITIALIZED 3
#endif

/* The process that marked itself loaded, 0 if none: its forked children
 * did not, and say nothing at exit either. */
static pid_t marked_pid;

/* Preloaded under the launcher, the shim says it was loaded, in
 * <dir>/streamcheck-PID.loaded: a process that makes no CUDA call leaves
 * no trace, and without this mark `streamcheck run` could not tell a
 * program that uses no CUDA from one that never loaded the shim (a static
 * executable, a cleared environment), which would pass unchecked. */
static void mark_loaded(void) {
    const char *l = getenv("STREAMCHECK_LAUNCHER");
    if (!l || strcmp(l, "1") != 0) return;
    mark("loaded");
    marked_pid = getpid();
}

/* At the exit of a marked process that wrote no trace, why: a driver never
 * initialized means no CUDA call (<dir>/streamcheck-PID.nocuda, which the
 * launcher counts as a process without CUDA activity, as the driver
 * never loads an injected shim there). An initialized one whose entry
 * points the program never asked of the shim means its calls went past
 * the wrappers (another tool handed out the driver's own): said as a
 * failure, not passed. Otherwise its calls were none the shim records
 * (a device query), and the trace says so, empty, as an injected shim's. */
static void account_for_silence(void) {
    if (!marked_pid || marked_pid != getpid() || reported || !sc_trace_pending()) return;
    CUresult (*ctx_device)(CUdevice *) = sc_drv.cuCtxGetDevice;
    char path[PATH_MAX];
    if (!ctx_device && atomic_load(&sc_ip_state) == SC_IP_PENDING && driver_loaded(path)) {
        /* The interpose backend never started, yet libcuda is here: ask the
         * one loaded (by its path: no search) whether it was initialized. */
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        if (h) ctx_device = (CUresult(*)(CUdevice *))sc_dlsym_real(h, "cuCtxGetDevice");
    }
    CUdevice dev;
    /* After the driver's own teardown it answers CUDA_ERROR_DEINITIALIZED. */
    if (!ctx_device || ctx_device(&dev) == CUDA_ERROR_NOT_INITIALIZED) {
        mark("nocuda");
        return;
    }
    if (strcmp(sc_backend, "interpose") == 0 && !sc_interpose_reached()) {
        report_error("the program initialized CUDA but never asked the shim for a driver entry point "
                     "(cuGetProcAddress) nor called cuInit through it: another tool handed it the driver's own, "
                     "so none of its calls were recorded");
        return;
    }
    sc_trace_setup(1);
}

__attribute__((constructor)) static void sc_ctor(void) {
    const char *p = getenv("STREAMCHECK_PRELOAD");
    if (p && strcmp(p, "1") == 0) {
        int saved = errno;
        mark_loaded();
        errno = saved;
        start(0, 1);
    }
}

/* A destructor rather than atexit: it runs after the program's own atexit
 * handlers and static destructors (and cudart's teardown), so their CUDA
 * calls are recorded before the End record. */
__attribute__((destructor)) static void sc_dtor(void) {
    if (atomic_load(&started)) {
        int saved = errno;
        atomic_store(&sc_active, 0);
        account_for_silence();
        sc_trace_finish();
        if (sc_stats) {
            uint64_t n = atomic_load(&sc_stat_handled);
            double unit = sc_stat_ns_per_unit();
            dprintf(2, "streamcheck: stats: %llu driver calls handled, %.0f ns each in the shim; stacks: %llu cache hits, %llu unwinds\n",
                    (unsigned long long)n, n ? unit * (double)atomic_load(&sc_stat_handler_time) / n : 0.0,
                    (unsigned long long)atomic_load(&sc_stat_stack_hits),
                    (unsigned long long)atomic_load(&sc_stat_stack_unwinds));
            /* Also when nothing was handled: whether the program asked us
             * for entry points at all tells where its calls went. */
            int interposed = strcmp(sc_backend, "interpose") == 0;
            char exe[256];
            ssize_t ne = readlink("/proc/self/exe", exe, sizeof exe - 1);
            exe[ne > 0 ? ne : 0] = 0;
            dprintf(2, "streamcheck: stats: process %d (%s), backend %s%s%s\n", (int)getpid(), exe, sc_backend,
                    interposed ? ", started " : "", interposed ? ip_started_by : "");
            if (interposed)
                dprintf(2, "streamcheck: stats: interposed: %llu cuGetProcAddress calls (%llu failed), %llu answers swapped for wrappers (%llu by name), %llu dlsym lookups in libcuda swapped (first: %s)\n",
                        (unsigned long long)atomic_load(&sc_stat_gpa_calls), (unsigned long long)atomic_load(&sc_stat_gpa_failed),
                        (unsigned long long)(atomic_load(&sc_stat_gpa_swapped) + atomic_load(&sc_stat_gpa_by_name)),
                        (unsigned long long)atomic_load(&sc_stat_gpa_by_name),
                        (unsigned long long)atomic_load(&sc_stat_dlsym_swapped),
                        sc_stat_first_dlsym[0] ? sc_stat_first_dlsym : "none");
            if (atomic_load(&sc_stat_foreign_gpa))
                dprintf(2, "streamcheck: stats: cuGetProcAddress looked up %llu times in another library than libcuda (first: %s)\n",
                        (unsigned long long)atomic_load(&sc_stat_foreign_gpa),
                        sc_stat_foreign_gpa_lib[0] ? sc_stat_foreign_gpa_lib : "not found");
            if (n) {
                double d = (double)n / unit;
                if (atomic_load(&sc_stat_prefault_started))
                    dprintf(2, "streamcheck: stats: prefault helper on, %llu KiB faulted in ahead\n",
                            (unsigned long long)(atomic_load(&sc_stat_prefaulted) >> 10));
                else
                    dprintf(2, "streamcheck: stats: prefault helper off\n");
                uint64_t uw = atomic_load(&sc_stat_stack_unwinds);
                if (uw)
                    dprintf(2, "streamcheck: stats: unwinds: %.1f frames walked, %.0f ns each\n",
                            (double)atomic_load(&sc_stat_unwound_frames) / (double)uw,
                            unit * (double)atomic_load(&sc_stat_unwind_time) / (double)uw);
                uint64_t mr = atomic_load(&sc_stat_maps_reads);
                if (mr || atomic_load(&sc_stat_tramp_ranges))
                    dprintf(2, "streamcheck: stats: Python trampolines: %llu code ranges registered; /proc/self/maps read %llu times, %.0f us in all\n",
                            (unsigned long long)atomic_load(&sc_stat_tramp_ranges), (unsigned long long)mr,
                            unit * (double)atomic_load(&sc_stat_maps_time) / 1000.0);
                uint64_t rw = atomic_load(&sc_stat_release_waits);
                if (rw)
                    dprintf(2, "streamcheck: stats: %llu allocations or creates waited for another thread's free or destroy to be recorded\n",
                            (unsigned long long)rw);
                uint64_t hw = atomic_load(&sc_stat_hostfn_wrapped);
                if (hw)
                    dprintf(2, "streamcheck: stats: host functions: %llu wrapped, %llu runs recorded\n",
                            (unsigned long long)hw, (unsigned long long)atomic_load(&sc_stat_hostfn_ran));
                uint64_t nl = atomic_load(&sc_stat_launches);
                if (nl)
                    dprintf(2, "streamcheck: stats: launches: %llu, %.1f parameter words looked up, %.1f written raw, %.0f ns each\n",
                            (unsigned long long)nl, (double)atomic_load(&sc_stat_scan_words) / (double)nl,
                            (double)atomic_load(&sc_stat_raw_words) / (double)nl,
                            unit * (double)atomic_load(&sc_stat_scan_time) / (double)nl);
                dprintf(2, "streamcheck: stats: trace: %llu bytes, %llu events\n", (unsigned long long)sc_trace_bytes(),
                        (unsigned long long)sc_trace_events());
                dprintf(2, "streamcheck: stats: ns per call: decode %.0f, stack %.0f, write %.0f, allocation map %.0f\n",
                        atomic_load(&sc_stat_phase_time[SC_PHASE_DECODE]) / d, atomic_load(&sc_stat_phase_time[SC_PHASE_STACK]) / d,
                        atomic_load(&sc_stat_phase_time[SC_PHASE_EMIT]) / d, atomic_load(&sc_stat_phase_time[SC_PHASE_MAP]) / d);
            }
        }
        errno = saved;
    }
}
