/*
 * fakecupti.c: a stand-in for libcupti and for the few libcuda functions the
 * shim calls itself, for tests on machines without a GPU.
 *
 * It implements the CUPTI subscriber calls the shim uses and delivers
 * callbacks the way CUPTI does: CUpti_CallbackData with functionParams
 * pointing at the driver function's "_params" struct, an enter and an exit
 * callback per call, runtime-domain callbacks around the driver ones. The
 * fake application (fakeapp.c) drives it through the fk_* functions.
 *
 * Set FAKECUPTI_BUSY=1 to make cuptiSubscribe fail as it does when another
 * tool holds the subscriber.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "fakecuda.h"

#define CUPTI_ERROR_INVALID_PARAMETER 1
#define CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED 39
#define CUDA_ERROR_INVALID_HANDLE 400

/* Callback names by id. Ids start at 1 and have gaps, like CUPTI's. The
 * numbered ones come first; from DRV_DERIVED on, add_shim_names adds the
 * names of the shim's table (drvcalls.h) that are not among them, so a
 * case can make any call the shim records without a line here. */
#define DRV_DERIVED 200
static const char *driver_names[1024] = {
    [1] = "cuInit",
    [2] = "cuMemAlloc", /* v1 layout: must not be enabled */
    [3] = "cuStreamCreate",
    [4] = "cuStreamCreateWithPriority",
    [5] = "cuStreamDestroy_v2",
    [6] = "cuStreamSynchronize",
    [7] = "cuStreamSynchronize_ptsz",
    [8] = "cuStreamQuery",
    [9] = "cuStreamQuery_ptsz",
    /* 10..19: a gap */
    [20] = "cuEventCreate",
    [21] = "cuEventRecord",
    [22] = "cuEventRecord_ptsz",
    [23] = "cuEventDestroy_v2",
    [24] = "cuEventSynchronize",
    [25] = "cuEventQuery",
    [26] = "cuStreamWaitEvent",
    [27] = "cuStreamWaitEvent_ptsz",
    [28] = "cuCtxSynchronize",
    [29] = "cuMemAllocAsync",
    [30] = "cuMemAllocAsync_ptsz",
    [31] = "cuMemAllocFromPoolAsync",
    [32] = "cuMemAlloc_v2",
    [33] = "cuMemFreeAsync",
    [34] = "cuMemFreeAsync_ptsz",
    [35] = "cuMemFree_v2",
    [36] = "cuLaunchKernel",
    [37] = "cuLaunchKernel_ptsz",
    [38] = "cuLaunchKernelEx",
    [39] = "cuMemcpyHtoD_v2",
    [40] = "cuMemcpyHtoD_v2_ptds",
    [41] = "cuMemcpyDtoHAsync_v2",
    [42] = "cuMemcpy",
    [43] = "cuMemcpy2DAsync_v2",
    [44] = "cuMemsetD8_v2",
    [45] = "cuMemsetD32Async",
    [46] = "cuLaunchHostFunc",
    [47] = "cuStreamBeginCapture_v2",
    [48] = "cuStreamEndCapture",
    [49] = "cuGraphLaunch",
    [50] = "cuMemPoolCreate",
    [51] = "cuCtxGetDevice",
    [52] = "cuPointerGetAttribute",
    [53] = "cuLaunchCooperativeKernel",
    [54] = "cuMemcpy3DAsync_v2",
    [55] = "cuMemsetD2D32Async",
    [56] = "cuStreamAddCallback",
    [57] = "cuMemcpyPeerAsync",
    [58] = "cuMemAllocPitch_v2",
    [59] = "cuModuleUnload",
    [60] = "cuGraphAddMemAllocNode",
    [61] = "cuGraphAddNode_v2",
    [62] = "cuGraphAddNode",
    [63] = "cuGraphInstantiateWithFlags",
    [64] = "cuGraphExecDestroy",
    [65] = "cuGraphDestroy",
    [66] = "cuEventRecordWithFlags",
    [67] = "cuGraphCreate",
    [68] = "cuGraphClone",
    [69] = "cuGraphAddKernelNode_v2",
    [70] = "cuGraphKernelNodeSetParams_v2",
    [71] = "cuGraphExecKernelNodeSetParams_v2",
    [72] = "cuGraphExecUpdate_v2",
    [73] = "cuStreamBeginCaptureToGraph",
    [74] = "cuMemcpyPeer",
    [75] = "cuGraphAddEventRecordNode",
    [76] = "cuGraphAddEventWaitNode",
    [77] = "cuGraphEventRecordNodeSetEvent",
    [78] = "cuGraphEventWaitNodeSetEvent",
    [79] = "cuGraphExecEventRecordNodeSetEvent",
    [80] = "cuGraphExecEventWaitNodeSetEvent",
    [81] = "cuGraphNodeSetParams",
    [82] = "cuGraphExecNodeSetParams",
    [83] = "cuGraphAddKernelNode",
    [84] = "cuGraphAddMemcpyNode",
    [85] = "cuGraphAddMemsetNode",
    [86] = "cuGraphDestroyNode",
    [87] = "cuGraphAddChildGraphNode",
    [88] = "cuGraphNodeSetEnabled",
    [89] = "cuMemcpyBatchAsync",
    [90] = "cuMemcpyBatchAsync_v2",
    [91] = "cuGraphExecChildGraphNodeSetParams",
    [92] = "cuStreamWriteValue32_v2",
    [93] = "cuStreamWaitValue64_v2_ptsz",
    [94] = "cuStreamBatchMemOp_v2",
    [95] = "cuMemcpy3DBatchAsync",
    [96] = "cuMemcpy3DBatchAsync_v2",
    [97] = "cuMemcpyWithAttributesAsync",
    [98] = "cuMemcpy3DWithAttributesAsync",
    [99] = "cuGraphAddBatchMemOpNode",
    [100] = "cuGraphBatchMemOpNodeSetParams",
    [101] = "cuMemPoolExportToShareableHandle",
    [102] = "cuMemPoolImportFromShareableHandle",
    [103] = "cuMemPoolExportPointer",
    [104] = "cuMemPoolImportPointer",
    [105] = "cuIpcGetEventHandle",
    [106] = "cuIpcOpenEventHandle",
    [107] = "cuIpcGetMemHandle",
    [108] = "cuIpcOpenMemHandle_v2",
    [109] = "cuIpcCloseMemHandle",
    [110] = "cuMemAllocHost_v2",
    [111] = "cuMemHostAlloc",
    [112] = "cuMemFreeHost",
    [113] = "cuMemHostRegister_v2",
    [114] = "cuMemHostUnregister",
    [115] = "cuMemAllocManaged",
    [116] = "cuMemAddressReserve",
    [117] = "cuMemCreate",
    [118] = "cuMemMap",
    [119] = "cuMemSetAccess",
    [120] = "cuMemUnmap",
    [121] = "cuMemRelease",
    [122] = "cuMemAddressFree",
    [123] = "cuMemPoolSetAttribute",
    [124] = "cuDeviceGetDefaultMemPool",
    [125] = "cuDeviceGetMemPool",
    [126] = "cuDeviceSetMemPool",
    [127] = "cuMemPoolTrimTo",
    [128] = "cuMemSetMemPool",
    [129] = "cuMemAllocHost", /* v1 layout (a 32-bit size): must not be enabled */
    [130] = "cuModuleGetGlobal_v2",
    [131] = "cuLibraryGetGlobal",
    [132] = "cuLibraryGetManaged",
};
static const char *runtime_names[] = {
    [1] = "cudaMalloc_v3020",
    [2] = "cudaFree_v3020",
    [3] = "cudaMallocAsync_v11020",
    [4] = "cudaMallocAsync_ptsz_v11020",
    [5] = "cudaFreeAsync_v11020",
    [6] = "cudaFreeAsync_ptsz_v11020",
    [7] = "cudaStreamCreate_v3020",
    [8] = "cudaStreamCreateWithFlags_v5000",
    [9] = "cudaStreamDestroy_v5050",
    [10] = "cudaEventCreate_v3020",
    [11] = "cudaEventRecord_v3020",
    [12] = "cudaEventDestroy_v3020",
    [13] = "cudaEventQuery_v3020",
    [14] = "cudaEventSynchronize_v3020",
    [15] = "cudaStreamWaitEvent_v3020",
    [16] = "cudaStreamSynchronize_v3020",
    [17] = "cudaStreamQuery_v3020",
    [18] = "cudaDeviceSynchronize_v3020",
    [19] = "cudaLaunchKernel_v7000",
    [20] = "cudaLaunchKernel_ptsz_v7000",
    [21] = "cudaMemcpy_v3020",
    [22] = "cudaMemcpyAsync_v3020",
    [23] = "cudaMemset_v3020",
    [24] = "cudaMemsetAsync_v3020",
    [25] = "cudaLaunchHostFunc_v10000",
    [26] = "cudaStreamBeginCapture_v10000",
    [27] = "cudaStreamEndCapture_v10000",
    [28] = "cudaGraphLaunch_v10000",
    [29] = "cudaMemPoolCreate_v11020",
    [30] = "cudaMallocFromPoolAsync_v11020",
    [31] = "cudaGetDevice_v3020", /* not wanted by the shim */
    [32] = "cudaMemcpy2DAsync_v3020",
    [33] = "cudaGraphInstantiateWithFlags_v11040",
    [34] = "cudaMemPoolExportToShareableHandle_v11020",
    [35] = "cudaMemPoolImportFromShareableHandle_v11020",
    [36] = "cudaMemPoolExportPointer_v11020",
    [37] = "cudaMemPoolImportPointer_v11020",
    [38] = "cudaIpcGetEventHandle_v4010",
    [39] = "cudaIpcOpenEventHandle_v4010",
    [40] = "cudaIpcGetMemHandle_v4010",
    [41] = "cudaIpcOpenMemHandle_v4010",
    [42] = "cudaIpcCloseMemHandle_v4010",
    [43] = "cudaMallocHost_v3020",
    [44] = "cudaHostAlloc_v3020",
    [45] = "cudaFreeHost_v3020",
    [46] = "cudaHostRegister_v4000",
    [47] = "cudaHostUnregister_v4000",
    [48] = "cudaMallocManaged_v6000",
    [49] = "cudaMallocPitch_v3020",
    [50] = "cudaMemPoolSetAttribute_v11020",
    [51] = "cudaDeviceGetDefaultMemPool_v11020",
    [52] = "cudaDeviceSetMemPool_v11020",
    [53] = "cudaMemPoolTrimTo_v11020",
};
#define NDRV (sizeof driver_names / sizeof driver_names[0])
#define NRT (sizeof runtime_names / sizeof runtime_names[0])

static CUpti_CallbackFunc sub_cb;
static void *sub_ud;
static int subscribed;
static unsigned char enabled_drv[NDRV], enabled_rt[NRT];
static _Atomic uint32_t correlation;

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc cb, void *ud) {
    const char *busy = getenv("FAKECUPTI_BUSY");
    if (busy && strcmp(busy, "1") == 0) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    if (subscribed) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    subscribed = 1;
    sub_cb = cb;
    sub_ud = ud;
    *h = (CUpti_SubscriberHandle)&sub_cb;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle h) {
    (void)h;
    subscribed = 0;
    sub_cb = NULL;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle h, CUpti_CallbackDomain d, CUpti_CallbackId id) {
    (void)h;
    if (d == CUPTI_CB_DOMAIN_DRIVER_API && id < NDRV && driver_names[id]) {
        enabled_drv[id] = (unsigned char)enable;
        return CUPTI_SUCCESS;
    }
    if (d == CUPTI_CB_DOMAIN_RUNTIME_API && id < NRT && runtime_names[id]) {
        enabled_rt[id] = (unsigned char)enable;
        return CUPTI_SUCCESS;
    }
    return CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle h, CUpti_CallbackDomain d) {
    (void)h;
    for (size_t i = 0; i < NDRV; i++)
        if (d == CUPTI_CB_DOMAIN_DRIVER_API && driver_names[i]) enabled_drv[i] = (unsigned char)enable;
    for (size_t i = 0; i < NRT; i++)
        if (d == CUPTI_CB_DOMAIN_RUNTIME_API && runtime_names[i]) enabled_rt[i] = (unsigned char)enable;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain d, uint32_t id, const char **name) {
    if (!name) return CUPTI_ERROR_INVALID_PARAMETER;
    *name = NULL;
    if (d == CUPTI_CB_DOMAIN_DRIVER_API && id < NDRV) *name = driver_names[id];
    if (d == CUPTI_CB_DOMAIN_RUNTIME_API && id < NRT) *name = runtime_names[id];
    return *name ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult cuptiGetResultString(CUptiResult r, const char **s) {
    *s = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
                                                             : "CUPTI_ERROR_UNKNOWN";
    return CUPTI_SUCCESS;
}

/* ---- callback delivery ---- */

static __thread int cur_device;
static __thread uint64_t rt_corr_data, drv_corr_data;
static __thread uint32_t rt_corr, drv_corr;

/* The callback id of name, 0 if this fake's CUPTI does not know it. */
static uint32_t name_id(const char **names, size_t n, const char *name) {
    for (size_t i = 1; i < n; i++)
        if (names[i] && strcmp(names[i], name) == 0) return (uint32_t)i;
    return 0;
}

#include "../drvcalls.h"
#define FK_NAMES(name, decode, async, elem, pt, since, ...) #name, FK_PTNAME_##pt(name),
#define FK_NAMES0(name, decode, async, elem, pt, since) #name, NULL,
#define FK_PTNAME_PT_NONE(name) NULL
#define FK_PTNAME_PT_SZ(name) #name "_ptsz"
#define FK_PTNAME_PT_DS(name) #name "_ptds"
static const char *const shim_names[] = {SC_DRIVER_CALLS(FK_NAMES, FK_NAMES0)};

__attribute__((constructor)) static void add_shim_names(void) {
    size_t id = DRV_DERIVED;
    for (size_t i = 0; i < sizeof shim_names / sizeof shim_names[0]; i++) {
        if (!shim_names[i] || name_id(driver_names, DRV_DERIVED, shim_names[i])) continue;
        if (id == NDRV) abort(); /* driver_names is too short for the table */
        driver_names[id++] = shim_names[i];
    }
}

static uint32_t id_of(const char **names, size_t n, const char *name) {
    uint32_t id = name_id(names, n, name);
    if (!id) abort(); /* a scenario names a function this fake does not know */
    return id;
}

static void deliver(CUpti_CallbackDomain d, uint32_t id, const char *name, int site, const void *params, void *ret,
                    const char *symbol, uint64_t *corr_data, uint32_t corr) {
    int on = d == CUPTI_CB_DOMAIN_DRIVER_API ? enabled_drv[id] : enabled_rt[id];
    if (!subscribed || !sub_cb || !on) return;
    CUpti_CallbackData cb = {
        .callbackSite = site,
        .functionName = name,
        .functionParams = params,
        .functionReturnValue = ret,
        .symbolName = symbol,
        .context = (CUcontext)(uintptr_t)(0x1000 + cur_device),
        .contextUid = (uint32_t)cur_device + 1,
        .correlationData = corr_data,
        .correlationId = corr,
    };
    sub_cb(sub_ud, d, id, &cb);
}

static __thread int rt_result;
static __thread char rt_params[64]; /* runtime params: the shim does not read them */

/* Whether the app made a CUDA call: until then the driver is not
 * initialized, as a real one before cuInit (cuCtxGetDevice says so). */
static _Atomic int inited;

CUresult cuInit(unsigned int flags) {
    (void)flags;
    atomic_store(&inited, 1);
    return 0;
}

void fk_runtime_enter(const char *name) {
    atomic_store(&inited, 1);
    uint32_t id = id_of(runtime_names, NRT, name);
    rt_corr = atomic_fetch_add(&correlation, 1) + 1;
    deliver(CUPTI_CB_DOMAIN_RUNTIME_API, id, name, CUPTI_API_ENTER, rt_params, NULL, NULL, &rt_corr_data, rt_corr);
}

void fk_runtime_exit(const char *name, int result) {
    uint32_t id = id_of(runtime_names, NRT, name);
    rt_result = result;
    deliver(CUPTI_CB_DOMAIN_RUNTIME_API, id, name, CUPTI_API_EXIT, rt_params, &rt_result, NULL, &rt_corr_data, rt_corr);
}

/* The driver-domain callbacks of a call to name. A name this fake's CUPTI
 * does not know has none. */
static void cb_driver_enter(const char *name, void *params, const char *symbol) {
    uint32_t id = name_id(driver_names, NDRV, name);
    if (!id) return;
    drv_corr = atomic_fetch_add(&correlation, 1) + 1;
    deliver(CUPTI_CB_DOMAIN_DRIVER_API, id, name, CUPTI_API_ENTER, params, NULL, symbol, &drv_corr_data, drv_corr);
}

static void cb_driver_exit(const char *name, void *params, CUresult result, const char *symbol) {
    uint32_t id = name_id(driver_names, NDRV, name);
    if (!id) return;
    CUresult r = result;
    deliver(CUPTI_CB_DOMAIN_DRIVER_API, id, name, CUPTI_API_EXIT, params, &r, symbol, &drv_corr_data, drv_corr);
}

/* How the app's driver calls reach the driver (FAKE_ROUTE): by default
 * fk_driver_enter and fk_driver_exit deliver the callbacks themselves; with
 * a route, fk_driver_exit calls the driver's entry point by that route
 * (fakeroute.c), whose body delivers them. */
int fk_route(void);

void fk_driver_enter(const char *name, void *params, const char *symbol) {
    atomic_store(&inited, 1);
    if (fk_route()) return; /* the whole call happens at fk_driver_exit */
    id_of(driver_names, NDRV, name); /* a scenario must name a function this fake knows */
    cb_driver_enter(name, params, symbol);
}

void fk_route_call(const char *name, void *params, CUresult result, const char *symbol);

void fk_driver_exit(const char *name, void *params, CUresult result, const char *symbol) {
    if (fk_route()) {
        fk_route_call(name, params, result, symbol);
        return;
    }
    id_of(driver_names, NDRV, name);
    cb_driver_exit(name, params, result, symbol);
}

/* For fakeroute.c: the callbacks around a driver entry point's body. */
void fk_cb_enter(const char *name, void *params, const char *symbol) {
    atomic_store(&inited, 1);
    cb_driver_enter(name, params, symbol);
}
void fk_cb_exit(const char *name, void *params, CUresult result, const char *symbol) {
    cb_driver_exit(name, params, result, symbol);
}

/* ---- fake driver state ---- */

#define DEV_BASE 0x7f3000000000ull
#define DEV_SIZE 0x1000000000ull
static _Atomic uint64_t dev_next = DEV_BASE;

CUdeviceptr fk_device_alloc(size_t n) {
    uint64_t a = (n + 255) & ~255ull;
    return atomic_fetch_add(&dev_next, a ? a : 256);
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static struct {
    void *h;
    int fn;
    int n;
    size_t off[32], size[32];
} kernels[64];
static int nkernels;

/* Registering a handle again gives it a new layout, as a module loaded
 * after an unload can hand out the same handle for another kernel. */
void fk_register_kernel(void *handle, int is_cufunction, int nparams, const size_t *sizes) {
    pthread_mutex_lock(&mu);
    int k = 0;
    while (k < nkernels && kernels[k].h != handle) k++;
    if (k == nkernels) nkernels++;
    kernels[k].h = handle;
    kernels[k].fn = is_cufunction;
    kernels[k].n = nparams;
    size_t off = 0;
    for (int i = 0; i < nparams; i++) {
        size_t a = sizes[i] >= 8 ? 8 : sizes[i]; /* natural alignment */
        off = (off + a - 1) / a * a;
        kernels[k].off[i] = off;
        kernels[k].size[i] = sizes[i];
        off += sizes[i];
    }
    pthread_mutex_unlock(&mu);
}

static struct {
    void *h;
    const char *name;
} knames[16];
static int nknames;

void fk_set_kernel_name(void *handle, const char *name) {
    pthread_mutex_lock(&mu);
    for (int k = 0; k < nknames; k++)
        if (knames[k].h == handle) {
            knames[k].name = name;
            pthread_mutex_unlock(&mu);
            return;
        }
    knames[nknames].h = handle;
    knames[nknames].name = name;
    nknames++;
    pthread_mutex_unlock(&mu);
}

/* The name of a handle of the kind asked about (want_fn: a CUfunction). */
static CUresult kernel_name(const char **name, void *h, int want_fn) {
    CUresult r = CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&mu);
    int fn = -1;
    for (int k = 0; k < nkernels; k++)
        if (kernels[k].h == h) fn = kernels[k].fn;
    for (int k = 0; k < nknames; k++)
        if (knames[k].h == h && (fn == want_fn || fn < 0)) { /* a handle of no known kind answers both */
            *name = knames[k].name;
            r = 0;
        }
    pthread_mutex_unlock(&mu);
    return r;
}
CUresult cuFuncGetName(const char **name, void *func) { return kernel_name(name, func, 1); }
CUresult cuKernelGetName(const char **name, void *kernel) { return kernel_name(name, kernel, 0); }

static CUresult param_info(void *h, int want_fn, size_t i, size_t *off, size_t *size) {
    CUresult r = CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&mu);
    for (int k = 0; k < nkernels; k++) {
        if (kernels[k].h != h) continue;
        if (kernels[k].fn != want_fn) break; /* the wrong query for this kind of handle */
        if (i >= (size_t)kernels[k].n) {
            r = CUDA_ERROR_INVALID_VALUE;
            break;
        }
        *off = kernels[k].off[i];
        *size = kernels[k].size[i];
        r = 0;
        break;
    }
    pthread_mutex_unlock(&mu);
    return r;
}

CUresult cuKernelGetParamInfo(void *kernel, size_t i, size_t *off, size_t *size) {
    return param_info(kernel, 0, i, off, size);
}
CUresult cuFuncGetParamInfo(void *func, size_t i, size_t *off, size_t *size) { return param_info(func, 1, i, off, size); }

void fk_set_device(int dev) { cur_device = dev; }

CUresult cuDeviceGetCount(int *count) {
    *count = 2;
    return 0;
}

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev) {
    if (dev < 0 || dev >= 2) return CUDA_ERROR_INVALID_VALUE;
    *pool = (CUmemoryPool)(uintptr_t)(0xde0000 + 0x100 * dev);
    return 0;
}
CUresult cuCtxGetCurrent(CUcontext *c) {
    *c = (CUcontext)(uintptr_t)(0x1000 + cur_device); /* the context the callbacks name */
    return 0;
}
CUresult cuCtxGetDevice(CUdevice *d) {
    if (!atomic_load(&inited)) return 3; /* CUDA_ERROR_NOT_INITIALIZED */
    *d = cur_device;
    return 0;
}

static struct {
    const char *p;
    size_t n;
} pinned[64];
static int npinned;

void fk_register_pinned(const void *p, size_t n) {
    pthread_mutex_lock(&mu);
    pinned[npinned].p = p;
    pinned[npinned].n = n;
    npinned++;
    pthread_mutex_unlock(&mu);
}

/* Device memory is device 0's, but for ranges the app says are another
 * device's (fk_set_memory_device), so that a peer copy has two devices. */
static struct {
    CUdeviceptr p;
    size_t n;
    int dev;
} devmem[16];
static int ndevmem;

void fk_set_memory_device(CUdeviceptr p, size_t n, int dev) {
    pthread_mutex_lock(&mu);
    devmem[ndevmem].p = p;
    devmem[ndevmem].n = n;
    devmem[ndevmem].dev = dev;
    ndevmem++;
    pthread_mutex_unlock(&mu);
}

static int memory_device(CUdeviceptr ptr) {
    int d = 0;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < ndevmem; i++)
        if (ptr >= devmem[i].p && ptr - devmem[i].p < devmem[i].n) d = devmem[i].dev;
    pthread_mutex_unlock(&mu);
    return d;
}

CUresult cuPointerGetAttribute(void *data, int attr, CUdeviceptr ptr) {
    if (attr == 9 /* CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL */) {
        if (ptr < DEV_BASE || ptr >= DEV_BASE + DEV_SIZE) return CUDA_ERROR_INVALID_VALUE;
        *(int *)data = memory_device(ptr);
        return 0;
    }
    if (attr == 12 /* CU_POINTER_ATTRIBUTE_RANGE_SIZE: of a range the app described */) {
        CUresult r = CUDA_ERROR_INVALID_VALUE;
        pthread_mutex_lock(&mu);
        for (int i = 0; i < ndevmem; i++)
            if (ptr >= devmem[i].p && ptr - devmem[i].p < devmem[i].n) {
                *(size_t *)data = devmem[i].n;
                r = 0;
            }
        pthread_mutex_unlock(&mu);
        return r;
    }
    if (attr != 2 /* CU_POINTER_ATTRIBUTE_MEMORY_TYPE */) return CUDA_ERROR_INVALID_VALUE;
    if (ptr >= DEV_BASE && ptr < DEV_BASE + DEV_SIZE) {
        *(unsigned int *)data = CU_MEMORYTYPE_DEVICE;
        return 0;
    }
    CUresult r = CUDA_ERROR_INVALID_VALUE; /* pageable memory: unknown to the driver */
    pthread_mutex_lock(&mu);
    for (int i = 0; i < npinned; i++)
        if ((const char *)(uintptr_t)ptr >= pinned[i].p && (const char *)(uintptr_t)ptr < pinned[i].p + pinned[i].n) {
            *(unsigned int *)data = CU_MEMORYTYPE_HOST;
            r = 0;
        }
    pthread_mutex_unlock(&mu);
    return r;
}

/* CUDA 13.1's query: node 0x9600, made by a capture, is graph 0x9700's;
 * the driver knows no other node (the shim then goes by what it saw). */
CUresult cuGraphNodeGetContainingGraph(void *node, void **graph) {
    if ((uintptr_t)node != 0x9600) return CUDA_ERROR_INVALID_VALUE;
    *graph = (void *)(uintptr_t)0x9700;
    return 0;
}

static CUstream capture_stream;
static CUgraph capture_graph;

void fk_set_capture_graph(CUstream s, CUgraph g) {
    pthread_mutex_lock(&mu);
    capture_stream = s;
    capture_graph = g;
    pthread_mutex_unlock(&mu);
}

/* The capture status and graph of stream s: active with the graph the app
 * set, else none. */
CUresult cuStreamGetCaptureInfo_v3(CUstream s, int *status, unsigned long long *id, CUgraph *graph,
                                   const void **deps, const void **edges, size_t *ndeps) {
    (void)id, (void)deps, (void)edges, (void)ndeps;
    pthread_mutex_lock(&mu);
    int active = capture_graph && s == capture_stream;
    if (status) *status = active ? 1 : 0;
    if (graph) *graph = active ? capture_graph : NULL;
    pthread_mutex_unlock(&mu);
    return 0;
}

static struct {
    CUstream s;
    unsigned int flags;
    int prio;
} sflags[64];
static int nsflags;

void fk_set_stream_flags(CUstream s, unsigned int flags, int prio) {
    pthread_mutex_lock(&mu);
    sflags[nsflags].s = s;
    sflags[nsflags].flags = flags;
    sflags[nsflags].prio = prio;
    nsflags++;
    pthread_mutex_unlock(&mu);
}

CUresult cuStreamGetFlags(CUstream s, unsigned int *flags) {
    CUresult r = CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nsflags; i++)
        if (sflags[i].s == s) {
            *flags = sflags[i].flags;
            r = 0;
        }
    pthread_mutex_unlock(&mu);
    return r;
}

CUresult cuStreamGetPriority(CUstream s, int *prio) {
    CUresult r = CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nsflags; i++)
        if (sflags[i].s == s) {
            *prio = sflags[i].prio;
            r = 0;
        }
    pthread_mutex_unlock(&mu);
    return r;
}

/* For the app's own checks. */
int fk_enabled(int domain, const char *name) {
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API) return enabled_drv[id_of(driver_names, NDRV, name)];
    return enabled_rt[id_of(runtime_names, NRT, name)];
}

/* ---- host functions ---- */

static struct {
    void (*fn)(void *);
    void (*cb)(CUstream, CUresult, void *);
    CUstream s;
    void *ud;
} hostq[64];
static int nhostq;

CUresult cuLaunchHostFunc(CUstream s, void (*fn)(void *), void *ud) {
    pthread_mutex_lock(&mu);
    int ok = nhostq < 64;
    if (ok) hostq[nhostq++] = (typeof(hostq[0])){fn, NULL, s, ud};
    pthread_mutex_unlock(&mu);
    return ok ? 0 : CUDA_ERROR_INVALID_VALUE;
}

void fk_enqueue_callback(CUstream s, void (*cb)(CUstream, CUresult, void *), void *ud) {
    pthread_mutex_lock(&mu);
    if (nhostq < 64) hostq[nhostq++] = (typeof(hostq[0])){NULL, cb, s, ud};
    pthread_mutex_unlock(&mu);
}

static void *host_thread(void *arg) {
    (void)arg;
    pthread_mutex_lock(&mu);
    int n = nhostq;
    nhostq = 0;
    pthread_mutex_unlock(&mu);
    for (int i = 0; i < n; i++) {
        if (hostq[i].fn)
            hostq[i].fn(hostq[i].ud);
        else
            hostq[i].cb(hostq[i].s, 0, hostq[i].ud);
    }
    return NULL;
}

void fk_run_host_funcs(void) {
    pthread_t t;
    if (pthread_create(&t, NULL, host_thread, NULL) == 0) pthread_join(t, NULL);
}
