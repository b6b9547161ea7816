/*
 * fakecuda.h: what the test's fake CUPTI library (fakecupti.c) and fake
 * application (fakeapp.c) share. The CUDA handle types and CUPTI's callback
 * ABI (CUpti_CallbackData, domains, sites, results) are the shim's own
 * declarations (cupti_abi.h): they are declared once. The driver's "_params"
 * structs and the descriptors they point to are declared here, whole and
 * under CUDA's names, from the public headers' layouts: the shim's
 * cupti_abi.h declares only the parts it reads, some layouts shared by
 * several functions, so the fake app, which fills the whole structs as a
 * program and the driver would, checks that the shim reads the offsets
 * CUPTI lays out.
 */
#ifndef FAKECUDA_H
#define FAKECUDA_H

#include <stddef.h>
#include <stdint.h>

#include "../cupti_abi.h"

/* CUPTI's names for the types the shim declares with an sc_ prefix. */
typedef sc_CUpti_CallbackData CUpti_CallbackData;
typedef sc_CUpti_CallbackFunc CUpti_CallbackFunc;

/* generated_cuda_meta.h: one struct per driver function, members = params. */
typedef struct { CUstream *phStream; unsigned int Flags; } cuStreamCreate_params;
typedef struct { CUstream *phStream; unsigned int flags; int priority; } cuStreamCreateWithPriority_params;
typedef struct { CUstream hStream; } cuStreamDestroy_v2_params, cuStreamSynchronize_params, cuStreamQuery_params;
typedef struct { CUstream hStream; int mode; } cuStreamBeginCapture_v2_params;
typedef struct { CUstream hStream; CUgraph *phGraph; } cuStreamEndCapture_params;
typedef struct { CUevent *phEvent; unsigned int Flags; } cuEventCreate_params;
typedef struct { CUevent hEvent; CUstream hStream; } cuEventRecord_params;
typedef struct { CUevent hEvent; CUstream hStream; unsigned int flags; } cuEventRecordWithFlags_params;
typedef struct { CUevent hEvent; } cuEventDestroy_v2_params, cuEventSynchronize_params, cuEventQuery_params;
typedef struct { CUstream hStream; CUevent hEvent; unsigned int Flags; } cuStreamWaitEvent_params;
typedef struct { CUdeviceptr *dptr; size_t bytesize; CUstream hStream; } cuMemAllocAsync_params;
typedef struct { CUdeviceptr *dptr; size_t bytesize; CUmemoryPool pool; CUstream hStream; } cuMemAllocFromPoolAsync_params;
typedef struct { CUdeviceptr *dptr; size_t bytesize; } cuMemAlloc_v2_params;
typedef struct { CUdeviceptr dptr; CUstream hStream; } cuMemFreeAsync_params;
typedef struct { CUdeviceptr dptr; } cuMemFree_v2_params;
typedef struct { void *hmod; } cuModuleUnload_params;
typedef struct { CUdeviceptr *dptr; size_t *bytes; void *hmod; const char *name; } cuModuleGetGlobal_v2_params;
typedef struct {
    CUfunction f;
    unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
    CUstream hStream;
    void **kernelParams;
    void **extra;
} cuLaunchKernel_params;
typedef struct {
    unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
    CUstream hStream;
    void *attrs;
    unsigned int numAttrs;
} CUlaunchConfig;
typedef struct { const CUlaunchConfig *config; CUfunction f; void **kernelParams; void **extra; } cuLaunchKernelEx_params;
typedef struct { CUdeviceptr dstDevice; const void *srcHost; size_t ByteCount; } cuMemcpyHtoD_v2_params;
typedef struct { void *dstHost; CUdeviceptr srcDevice; size_t ByteCount; CUstream hStream; } cuMemcpyDtoHAsync_v2_params;
typedef struct { CUdeviceptr dst; CUdeviceptr src; size_t ByteCount; } cuMemcpy_params;
typedef struct {
    size_t srcXInBytes, srcY;
    int srcMemoryType;
    const void *srcHost;
    CUdeviceptr srcDevice;
    CUarray srcArray;
    size_t srcPitch;
    size_t dstXInBytes, dstY;
    int dstMemoryType;
    void *dstHost;
    CUdeviceptr dstDevice;
    CUarray dstArray;
    size_t dstPitch;
    size_t WidthInBytes, Height;
} CUDA_MEMCPY2D;
typedef struct { const CUDA_MEMCPY2D *pCopy; CUstream hStream; } cuMemcpy2DAsync_v2_params;
typedef struct {
    size_t srcXInBytes, srcY, srcZ, srcLOD;
    int srcMemoryType;
    const void *srcHost;
    CUdeviceptr srcDevice;
    CUarray srcArray;
    void *reserved0;
    size_t srcPitch, srcHeight;
    size_t dstXInBytes, dstY, dstZ, dstLOD;
    int dstMemoryType;
    void *dstHost;
    CUdeviceptr dstDevice;
    CUarray dstArray;
    void *reserved1;
    size_t dstPitch, dstHeight;
    size_t WidthInBytes, Height, Depth;
} CUDA_MEMCPY3D;
typedef struct { const CUDA_MEMCPY3D *pCopy; CUstream hStream; } cuMemcpy3DAsync_v2_params;
typedef struct {
    CUfunction f;
    unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
    CUstream hStream;
    void **kernelParams;
} cuLaunchCooperativeKernel_params;
typedef struct { CUdeviceptr dstDevice; size_t dstPitch; unsigned int ui; size_t Width; size_t Height; CUstream hStream; } cuMemsetD2D32Async_params;
typedef struct { CUstream hStream; void *callback; void *userData; unsigned int flags; } cuStreamAddCallback_params;
typedef struct { CUdeviceptr dstDevice; CUcontext dstContext; CUdeviceptr srcDevice; CUcontext srcContext; size_t ByteCount; CUstream hStream; } cuMemcpyPeerAsync_params;
typedef struct { CUdeviceptr dstDevice; CUcontext dstContext; CUdeviceptr srcDevice; CUcontext srcContext; size_t ByteCount; } cuMemcpyPeer_params;
typedef struct { CUdeviceptr *dptr; size_t *pPitch; size_t WidthInBytes; size_t Height; unsigned int ElementSizeBytes; } cuMemAllocPitch_v2_params;
typedef struct { CUdeviceptr dstDevice; unsigned char uc; size_t N; } cuMemsetD8_v2_params;
typedef struct { CUdeviceptr dstDevice; unsigned int ui; size_t N; CUstream hStream; } cuMemsetD32Async_params;
typedef struct { CUstream hStream; void (*fn)(void *); void *userData; } cuLaunchHostFunc_params;
typedef struct { CUgraphExec hGraphExec; CUstream hStream; } cuGraphLaunch_params;
typedef struct { CUgraphExec *phGraphExec; CUgraph hGraph; unsigned long long flags; } cuGraphInstantiateWithFlags_params;
typedef struct { CUgraphExec hGraphExec; } cuGraphExecDestroy_params;
typedef struct { CUgraph hGraph; } cuGraphDestroy_params;
typedef struct { CUmemoryPool *pool; const void *poolProps; } cuMemPoolCreate_params;

/* The allocation families: pinned, registered and managed memory, pitched
 * allocations (cuMemAllocPitch_v2_params above), virtual memory mappings. */
typedef struct { void **pp; size_t bytesize; } cuMemAllocHost_v2_params;
typedef struct { void **pp; size_t bytesize; unsigned int Flags; } cuMemHostAlloc_params;
typedef struct { void *p; } cuMemFreeHost_params;
typedef struct { void *p; size_t bytesize; unsigned int Flags; } cuMemHostRegister_v2_params;
typedef struct { void *p; } cuMemHostUnregister_params;
typedef struct { CUdeviceptr *dptr; size_t bytesize; unsigned int flags; } cuMemAllocManaged_params;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef uint64_t cuuint64_t;
typedef struct { CUdeviceptr *ptr; size_t size; size_t alignment; CUdeviceptr addr; unsigned long long flags; } cuMemAddressReserve_params;
typedef struct { CUdeviceptr ptr; size_t size; } cuMemAddressFree_params;
typedef struct { CUmemGenericAllocationHandle *handle; size_t size; const void *prop; unsigned long long flags; } cuMemCreate_params;
typedef struct { CUmemGenericAllocationHandle handle; } cuMemRelease_params;
typedef struct {
    CUdeviceptr ptr;
    size_t size;
    size_t offset;
    CUmemGenericAllocationHandle handle;
    unsigned long long flags;
} cuMemMap_params;
typedef struct { CUdeviceptr ptr; size_t size; } cuMemUnmap_params;
typedef struct { CUdeviceptr ptr; size_t size; const void *desc; size_t count; } cuMemSetAccess_params;
#define CU_MEMHOSTALLOC_PORTABLE 0x01
#define CU_MEMHOSTALLOC_DEVICEMAP 0x02
#define CU_MEMHOSTREGISTER_DEVICEMAP 0x02
#define CU_MEM_ATTACH_GLOBAL 0x1

/* Pools' attributes and the device's current pool. */
typedef enum {
    CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES = 1,
    CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC,
    CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
    CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
    CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
    CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH,
    CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
    CU_MEMPOOL_ATTR_USED_MEM_HIGH,
} CUmemPool_attribute;
typedef struct { CUmemoryPool pool; CUmemPool_attribute attr; void *value; } cuMemPoolSetAttribute_params;
typedef struct { CUdevice dev; CUmemoryPool pool; } cuDeviceSetMemPool_params;
typedef struct { CUmemoryPool *pool; CUdevice dev; } cuDeviceGetMemPool_params;
typedef struct { CUmemoryPool *pool_out; CUdevice dev; } cuDeviceGetDefaultMemPool_params;
typedef struct { CUmemoryPool pool; size_t minBytesToKeep; } cuMemPoolTrimTo_params;
struct CUmemLocation_st; /* CUmemLocation, declared below */
typedef struct { struct CUmemLocation_st *location; int type; CUmemoryPool pool; } cuMemSetMemPool_params;
#define CU_MEM_LOCATION_TYPE_DEVICE 1
#define CU_MEM_LOCATION_TYPE_HOST 2
#define CU_MEM_ALLOCATION_TYPE_PINNED 1

/* Graph memory nodes, laid out as cuda.h declares them. */
typedef struct CUmemLocation_st {
    int type, id;
} CUmemLocation;
typedef struct {
    int allocType, handleTypes;
    CUmemLocation location;
    void *win32SecurityAttributes;
    size_t maxSize;
    unsigned short usage;
    unsigned char reserved[54];
} CUmemPoolProps;
typedef struct {
    CUmemPoolProps poolProps;
    const void *accessDescs;
    size_t accessDescCount;
    size_t bytesize;
    CUdeviceptr dptr;
} CUDA_MEM_ALLOC_NODE_PARAMS;
#define CU_GRAPH_NODE_TYPE_KERNEL 0
#define CU_GRAPH_NODE_TYPE_WAIT_EVENT 6
#define CU_GRAPH_NODE_TYPE_EVENT_RECORD 7
#define CU_GRAPH_NODE_TYPE_MEM_ALLOC 10
typedef struct {
    CUevent event;
} CUDA_EVENT_RECORD_NODE_PARAMS;
typedef struct {
    CUevent event;
} CUDA_EVENT_WAIT_NODE_PARAMS;
/* Kernel, copy and set nodes: CUDA_KERNEL_NODE_PARAMS_v2 (v3 in
 * CUgraphNodeParams has the same layout; v1 stops after extra),
 * CUDA_MEMSET_NODE_PARAMS_v2, CUDA_MEMCPY_NODE_PARAMS. */
typedef struct {
    CUfunction func;
    unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
    void **kernelParams;
    void **extra;
    void *kern;
    CUcontext ctx;
} CUDA_KERNEL_NODE_PARAMS;
typedef struct {
    CUdeviceptr dst;
    size_t pitch;
    unsigned int value, elementSize;
    size_t width, height;
    CUcontext ctx;
} CUDA_MEMSET_NODE_PARAMS;
typedef struct {
    int flags, reserved;
    CUcontext copyCtx;
    CUDA_MEMCPY3D copyParams;
} CUDA_MEMCPY_NODE_PARAMS;
#define CU_GRAPH_NODE_TYPE_MEMCPY 1
#define CU_GRAPH_NODE_TYPE_MEMSET 2
#define CU_GRAPH_NODE_TYPE_HOST 3
#define CU_GRAPH_NODE_TYPE_GRAPH 4
#define CU_GRAPH_NODE_TYPE_CONDITIONAL 13
/* CUDA_CONDITIONAL_NODE_PARAMS: the driver points phGraph_out at its
 * array of size body graphs. */
typedef struct {
    unsigned long long handle;
    int type; /* CU_GRAPH_COND_TYPE_IF 0, WHILE 1, SWITCH 2 */
    unsigned int size;
    CUgraph *phGraph_out;
    CUcontext ctx;
} CUDA_CONDITIONAL_NODE_PARAMS;
typedef struct {
    int type;
    int reserved0[3];
    union {
        long long reserved1[29];
        CUDA_KERNEL_NODE_PARAMS kernel;
        CUDA_MEMCPY_NODE_PARAMS memcpy;
        CUDA_MEMSET_NODE_PARAMS memset;
        struct {
            CUgraph graph;
            int ownership;
        } graph; /* CUDA_CHILD_GRAPH_NODE_PARAMS */
        CUDA_MEM_ALLOC_NODE_PARAMS alloc;
        CUDA_EVENT_RECORD_NODE_PARAMS eventRecord;
        CUDA_EVENT_WAIT_NODE_PARAMS eventWait;
        CUDA_CONDITIONAL_NODE_PARAMS conditional;
    };
    long long reserved2;
} CUgraphNodeParams;
typedef struct {
    CUgraphNode *phGraphNode;
    CUgraph hGraph;
    const CUgraphNode *dependencies;
    size_t numDependencies;
    CUgraph childGraph;
} cuGraphAddChildGraphNode_params;
typedef struct {
    CUgraphNode *phGraphNode;
    CUgraph hGraph;
    const CUgraphNode *dependencies;
    size_t numDependencies;
    CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams;
} cuGraphAddMemAllocNode_params;
typedef struct {
    CUgraphNode *phGraphNode;
    CUgraph hGraph;
    const CUgraphNode *dependencies;
    const void *dependencyData;
    size_t numDependencies;
    CUgraphNodeParams *nodeParams;
} cuGraphAddNode_v2_params;
typedef struct {
    CUgraphNode *phGraphNode;
    CUgraph hGraph;
    const CUgraphNode *dependencies;
    size_t numDependencies;
    CUgraphNodeParams *nodeParams;
} cuGraphAddNode_params;

#define CU_LAUNCH_PARAM_END ((void *)0x00)
#define CU_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define CU_LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)

/* Interprocess sharing: the 64-byte export data and handles, and the
 * calls that make and take them. */
typedef struct { unsigned char reserved[64]; } CUmemPoolPtrExportData, CUipcEventHandle, CUipcMemHandle;
typedef struct { void *handle_out; CUmemoryPool pool; int handleType; unsigned long long flags; } cuMemPoolExportToShareableHandle_params;
typedef struct { CUmemoryPool *pool_out; void *handle; int handleType; unsigned long long flags; } cuMemPoolImportFromShareableHandle_params;
typedef struct { CUmemPoolPtrExportData *shareData_out; CUdeviceptr ptr; } cuMemPoolExportPointer_params;
typedef struct { CUdeviceptr *ptr_out; CUmemoryPool pool; CUmemPoolPtrExportData *shareData; } cuMemPoolImportPointer_params;
typedef struct { CUipcEventHandle *pHandle; CUevent event; } cuIpcGetEventHandle_params;
typedef struct { CUevent *phEvent; CUipcEventHandle handle; } cuIpcOpenEventHandle_params;
typedef struct { CUipcMemHandle *pHandle; CUdeviceptr dptr; } cuIpcGetMemHandle_params;
typedef struct { CUdeviceptr *pdptr; CUipcMemHandle handle; unsigned int Flags; } cuIpcOpenMemHandle_v2_params;
typedef struct { CUdeviceptr dptr; } cuIpcCloseMemHandle_params;
#define CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR 1

/* ---- the fake's controls, called by the fake application ---- */

/* Fire the callbacks CUPTI would: runtime enter/exit around driver
 * enter/exit. The app fills output parameters between driver enter and exit. */
void fk_runtime_enter(const char *name);
void fk_runtime_exit(const char *name, int result);
void fk_driver_enter(const char *name, void *params, const char *symbol);
void fk_driver_exit(const char *name, void *params, CUresult result, const char *symbol);

/* Fake device memory: addresses handed out from a range no host memory uses. */
CUdeviceptr fk_device_alloc(size_t n);
/* Fake driver knowledge used by the shim's own queries. */
void fk_register_kernel(void *handle, int is_cufunction, int nparams, const size_t *sizes);
/* The name cuFuncGetName (a CUfunction) or cuKernelGetName (a CUkernel) gives. */
void fk_set_kernel_name(void *handle, const char *name);
void fk_register_pinned(const void *p, size_t n);
void fk_set_stream_flags(CUstream s, unsigned int flags, int prio);
void fk_set_device(int dev);
int fk_query(void); /* cuInit through dlsym, nothing else */
void fk_set_memory_device(CUdeviceptr p, size_t n, int dev); /* also the range cuPointerGetAttribute's RANGE_SIZE gives */
/* The driver functions the shim calls itself: 2 devices, each with its
 * default pool (0xde0000 + 0x100 * device). */
CUresult cuDeviceGetCount(int *count);
CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev);
/* The graph cuStreamGetCaptureInfo says a capture on s builds (NULL: s is
 * not capturing). */
void fk_set_capture_graph(CUstream s, CUgraph g);
/* Host functions, as the driver queues them: cuLaunchHostFunc (which the
 * shim calls itself for STREAMCHECK_HOSTFN=marker) and the app's
 * enqueues, with the function and argument its parameters hold after the
 * driver-entry callback; fk_run_host_funcs runs the queue in order on a
 * thread of its own, as the driver does, and empties it. */
CUresult cuLaunchHostFunc(CUstream s, void (*fn)(void *), void *ud);
void fk_enqueue_callback(CUstream s, void (*cb)(CUstream, CUresult, void *), void *ud);
void fk_run_host_funcs(void);

/* Calls that create, change or destroy graphs, laid out as
 * generated_cuda_meta.h lays out their parameters. */
typedef struct { CUgraph *phGraph; unsigned int flags; } cuGraphCreate_params;
typedef struct { CUgraph *phGraphClone; CUgraph originalGraph; } cuGraphClone_params;
typedef struct {
    CUgraphNode *phGraphNode;
    CUgraph hGraph;
    const CUgraphNode *dependencies;
    size_t numDependencies;
    const void *nodeParams;
} cuGraphAddKernelNode_v2_params; /* and cuGraphAddKernelNode's */
typedef struct {
    CUgraphNode *phGraphNode;
    CUgraph hGraph;
    const CUgraphNode *dependencies;
    size_t numDependencies;
    const void *nodeParams; /* CUDA_MEMCPY3D, CUDA_MEMSET_NODE_PARAMS */
    CUcontext ctx;
} cuGraphAddMemcpyNode_params; /* and cuGraphAddMemsetNode's */
typedef struct { CUgraphNode hNode; const void *nodeParams; } cuGraphKernelNodeSetParams_v2_params;
typedef struct { CUgraphExec hGraphExec; CUgraphNode hNode; const void *nodeParams; } cuGraphExecKernelNodeSetParams_v2_params;
typedef struct { CUgraphExec hGraphExec; CUgraph hGraph; void *resultInfo; } cuGraphExecUpdate_v2_params;
typedef struct {
    CUgraphNode *phGraphNode;
    CUgraph hGraph;
    const CUgraphNode *dependencies;
    size_t numDependencies;
    CUevent event;
} cuGraphAddEventRecordNode_params; /* and cuGraphAddEventWaitNode's */
typedef struct { CUgraphNode hNode; CUevent event; } cuGraphEventRecordNodeSetEvent_params; /* and Wait */
typedef struct { CUgraphExec hGraphExec; CUgraphNode hNode; CUevent event; } cuGraphExecEventRecordNodeSetEvent_params;
typedef struct { CUgraphNode hNode; CUgraphNodeParams *nodeParams; } cuGraphNodeSetParams_params;
typedef struct { CUgraphExec hGraphExec; CUgraphNode hNode; unsigned int isEnabled; } cuGraphNodeSetEnabled_params;
typedef struct { CUgraphExec hGraphExec; CUgraphNode hNode; CUgraph childGraph; } cuGraphExecChildGraphNodeSetParams_params;
typedef struct { CUstream stream; CUdeviceptr addr; unsigned int value; unsigned int flags; } cuStreamWriteValue32_v2_params;
typedef struct { CUstream stream; CUdeviceptr addr; unsigned long long value; unsigned int flags; } cuStreamWaitValue64_v2_params;
/* CUDA's CUstreamBatchMemOpParams, as cuda.h declares it. */
typedef enum {
    CU_STREAM_MEM_OP_WAIT_VALUE_32 = 1,
    CU_STREAM_MEM_OP_WRITE_VALUE_32 = 2,
    CU_STREAM_MEM_OP_WAIT_VALUE_64 = 4,
    CU_STREAM_MEM_OP_WRITE_VALUE_64 = 5,
    CU_STREAM_MEM_OP_BARRIER = 6,
    CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES = 3
} CUstreamBatchMemOpType;
typedef union {
    CUstreamBatchMemOpType operation;
    struct {
        CUstreamBatchMemOpType operation;
        CUdeviceptr address;
        union {
            unsigned int value;
            unsigned long long value64;
        };
        unsigned int flags;
        CUdeviceptr alias;
    } waitValue, writeValue;
    struct {
        CUstreamBatchMemOpType operation;
        unsigned int flags;
    } flushRemoteWrites, memoryBarrier;
    unsigned long long pad[6];
} CUstreamBatchMemOpParams;
typedef struct { CUstream stream; unsigned int count; CUstreamBatchMemOpParams *paramArray; unsigned int flags; } cuStreamBatchMemOp_v2_params;
/* CUDA 12.8's batch copy, with failIdx; CUDA 13's _v2 drops it. */
#define CU_MEMCPY_SRC_ACCESS_ORDER_STREAM 1
#define CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL 2
typedef struct {
    int srcAccessOrder;
    CUmemLocation srcLocHint, dstLocHint;
    unsigned int flags;
} CUmemcpyAttributes;
typedef struct {
    const CUdeviceptr *dsts, *srcs;
    const size_t *sizes;
    size_t count;
    const CUmemcpyAttributes *attrs;
    const size_t *attrsIdxs;
    size_t numAttrs;
    size_t *failIdx;
    CUstream hStream;
} cuMemcpyBatchAsync_params;
typedef struct {
    const CUdeviceptr *dsts, *srcs;
    const size_t *sizes;
    size_t count;
    const CUmemcpyAttributes *attrs;
    const size_t *attrsIdxs;
    size_t numAttrs;
    CUstream hStream;
} cuMemcpyBatchAsync_v2_params;
/* CUDA 13.1's single copy with attributes. */
typedef struct { CUdeviceptr dst; CUdeviceptr src; size_t size; CUmemcpyAttributes *attr; CUstream hStream; } cuMemcpyWithAttributesAsync_params;
/* 3D batch copies, as cuda.h declares them. */
typedef enum { CU_MEMCPY_OPERAND_TYPE_POINTER = 1, CU_MEMCPY_OPERAND_TYPE_ARRAY = 2 } CUmemcpy3DOperandType;
typedef struct { size_t x, y, z; } CUoffset3D;
typedef struct { size_t width, height, depth; } CUextent3D;
typedef struct {
    CUmemcpy3DOperandType type;
    union {
        struct {
            CUdeviceptr ptr;
            size_t rowLength;
            size_t layerHeight;
            CUmemLocation locHint;
        } ptr;
        struct {
            void *array;
            CUoffset3D offset;
        } array;
    } op;
} CUmemcpy3DOperand;
typedef struct {
    CUmemcpy3DOperand src;
    CUmemcpy3DOperand dst;
    CUextent3D extent;
    int srcAccessOrder;
    unsigned int flags;
} CUDA_MEMCPY3D_BATCH_OP;
typedef struct { size_t numOps; CUDA_MEMCPY3D_BATCH_OP *opList; size_t *failIdx; unsigned long long flags; CUstream hStream; } cuMemcpy3DBatchAsync_params;
typedef struct { size_t numOps; CUDA_MEMCPY3D_BATCH_OP *opList; unsigned long long flags; CUstream hStream; } cuMemcpy3DBatchAsync_v2_params;
typedef struct { CUDA_MEMCPY3D_BATCH_OP *op; unsigned long long flags; CUstream hStream; } cuMemcpy3DWithAttributesAsync_params;
typedef struct { CUgraphExec hGraphExec; CUgraphNode hNode; CUgraphNodeParams *nodeParams; } cuGraphExecNodeSetParams_params;
typedef struct {
    CUstream hStream;
    CUgraph hGraph;
    const CUgraphNode *dependencies;
    const void *dependencyData;
    size_t numDependencies;
    int mode;
} cuStreamBeginCaptureToGraph_params;

#endif
