/*
 * cupti_abi.h: our own declarations of the parts of the CUPTI callback API
 * and of the CUDA driver API that the shim uses. No CUDA header exists where
 * the shim is built, and the shim must not depend on one: every type here is
 * declared from the documented C ABI (x86-64 / aarch64 LP64), and every
 * library entry point is reached through dlsym.
 *
 * The layouts were checked against public copies of cupti_callbacks.h,
 * cuda.h and generated_cuda_meta.h. The CUPTI parameter structs
 * ("cuX_params") are plain C structs whose members are the driver function's
 * parameters in order, with their C types, so natural C alignment gives the
 * layout CUPTI uses.
 */
#ifndef STREAMCHECK_CUPTI_ABI_H
#define STREAMCHECK_CUPTI_ABI_H

#include <stddef.h>
#include <stdint.h>

/* ---- CUDA driver types ---- */

typedef int CUresult; /* enum cudaError_enum */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr; /* 64-bit since CUDA 3.2 (_v2 API) */
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUfunc_st *CUfunction;
typedef struct CUkern_st *CUkernel;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUarray_st *CUarray;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_NOT_READY 600

#define CU_STREAM_NON_BLOCKING 0x1u
/* Special stream handles (cuda.h: CU_STREAM_LEGACY, CU_STREAM_PER_THREAD). */
#define SC_STREAM_LEGACY ((uintptr_t)0x1)
#define SC_STREAM_PER_THREAD ((uintptr_t)0x2)

/* cuLaunchKernel "extra" keys (cuda.h: CU_LAUNCH_PARAM_*). */
#define SC_LAUNCH_PARAM_END ((uintptr_t)0x00)
#define SC_LAUNCH_PARAM_BUFFER_POINTER ((uintptr_t)0x01)
#define SC_LAUNCH_PARAM_BUFFER_SIZE ((uintptr_t)0x02)

/* CUmemorytype and CUpointer_attribute values used with cuPointerGetAttribute. */
#define CU_MEMORYTYPE_HOST 1u
#define CU_MEMORYTYPE_DEVICE 2u
#define CU_MEMORYTYPE_ARRAY 3u
#define CU_MEMORYTYPE_UNIFIED 4u
#define CU_POINTER_ATTRIBUTE_MEMORY_TYPE 2
#define CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL 9
#define CU_POINTER_ATTRIBUTE_RANGE_SIZE 12 /* size_t: the size of the allocation holding the address */

typedef struct {
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    CUstream hStream;
    void *attrs; /* CUlaunchAttribute* */
    unsigned int numAttrs;
} sc_CUlaunchConfig;

/* CUDA_MEMCPY2D (the _v2 layout, size_t fields). */
typedef struct {
    size_t srcXInBytes, srcY;
    unsigned int srcMemoryType; /* CUmemorytype */
    const void *srcHost;
    CUdeviceptr srcDevice;
    CUarray srcArray;
    size_t srcPitch;
    size_t dstXInBytes, dstY;
    unsigned int dstMemoryType;
    void *dstHost;
    CUdeviceptr dstDevice;
    CUarray dstArray;
    size_t dstPitch;
    size_t WidthInBytes, Height;
} sc_CUDA_MEMCPY2D;

/* CUDA_MEMCPY3D (the _v2 layout). */
typedef struct {
    size_t srcXInBytes, srcY, srcZ, srcLOD;
    unsigned int srcMemoryType;
    const void *srcHost;
    CUdeviceptr srcDevice;
    CUarray srcArray;
    void *reserved0;
    size_t srcPitch, srcHeight;
    size_t dstXInBytes, dstY, dstZ, dstLOD;
    unsigned int dstMemoryType;
    void *dstHost;
    CUdeviceptr dstDevice;
    CUarray dstArray;
    void *reserved1;
    size_t dstPitch, dstHeight;
    size_t WidthInBytes, Height, Depth;
} sc_CUDA_MEMCPY3D;

/* CUDA_MEMCPY3D_PEER: like CUDA_MEMCPY3D with contexts instead of reserved. */
typedef struct {
    size_t srcXInBytes, srcY, srcZ, srcLOD;
    unsigned int srcMemoryType;
    const void *srcHost;
    CUdeviceptr srcDevice;
    CUarray srcArray;
    CUcontext srcContext;
    size_t srcPitch, srcHeight;
    size_t dstXInBytes, dstY, dstZ, dstLOD;
    unsigned int dstMemoryType;
    void *dstHost;
    CUdeviceptr dstDevice;
    CUarray dstArray;
    CUcontext dstContext;
    size_t dstPitch, dstHeight;
    size_t WidthInBytes, Height, Depth;
} sc_CUDA_MEMCPY3D_PEER;

/* ---- CUPTI callback API (cupti_callbacks.h) ---- */

typedef int CUptiResult;
#define CUPTI_SUCCESS 0

typedef int CUpti_CallbackDomain;
#define CUPTI_CB_DOMAIN_DRIVER_API 1
#define CUPTI_CB_DOMAIN_RUNTIME_API 2

typedef uint32_t CUpti_CallbackId;
typedef struct CUpti_Subscriber_st *CUpti_SubscriberHandle;

#define CUPTI_API_ENTER 0
#define CUPTI_API_EXIT 1

typedef struct {
    int callbackSite; /* CUpti_ApiCallbackSite: CUPTI_API_ENTER / EXIT */
    const char *functionName;
    const void *functionParams;
    void *functionReturnValue; /* CUresult* (driver) or cudaError_t* (runtime) */
    const char *symbolName;    /* kernel name, launches only */
    CUcontext context;
    uint32_t contextUid;
    uint64_t *correlationData;
    uint32_t correlationId;
} sc_CUpti_CallbackData;

typedef void (*sc_CUpti_CallbackFunc)(void *userdata, CUpti_CallbackDomain domain,
                                      CUpti_CallbackId cbid, const void *cbdata);

/* ---- CUPTI parameter structs for the driver functions the shim records ----
 * One struct per distinct layout; a comment names the functions using it.
 * _ptsz/_ptds variants have the same layout as the plain function. */

/* cuStreamCreate */
typedef struct { CUstream *phStream; unsigned int Flags; } p_cuStreamCreate;
/* cuStreamCreateWithPriority */
typedef struct { CUstream *phStream; unsigned int flags; int priority; } p_cuStreamCreateWithPriority;
/* cuStreamDestroy(_v2), cuStreamSynchronize, cuStreamQuery, cuStreamBeginCapture
 * (v1), and any function whose first parameter is the stream: the stream is
 * read through this. */
typedef struct { CUstream hStream; } p_stream_first;
/* cuEventCreate */
typedef struct { void *phEvent; unsigned int Flags; } p_cuEventCreate;
/* cuEventRecord, cuEventRecordWithFlags */
typedef struct { CUevent hEvent; CUstream hStream; } p_cuEventRecord;
typedef struct { CUevent hEvent; CUstream hStream; unsigned int flags; } p_cuEventRecordWithFlags;
#define SC_EVENT_RECORD_EXTERNAL 0x1 /* CU_EVENT_RECORD_EXTERNAL */
#define SC_EVENT_WAIT_EXTERNAL 0x1   /* CU_EVENT_WAIT_EXTERNAL */
/* cuEventDestroy(_v2), cuEventSynchronize, cuEventQuery */
typedef struct { CUevent hEvent; } p_event_first;
/* cuStreamWaitEvent */
typedef struct { CUstream hStream; CUevent hEvent; unsigned int Flags; } p_cuStreamWaitEvent;
/* cuMemAllocAsync */
typedef struct { CUdeviceptr *dptr; size_t bytesize; CUstream hStream; } p_cuMemAllocAsync;
/* cuMemAllocFromPoolAsync */
typedef struct { CUdeviceptr *dptr; size_t bytesize; CUmemoryPool pool; CUstream hStream; } p_cuMemAllocFromPoolAsync;
/* cuMemAlloc_v2, cuMemAllocManaged (one more unsigned after) */
typedef struct { CUdeviceptr *dptr; size_t bytesize; } p_cuMemAlloc;
/* cuModuleGetGlobal_v2, cuLibraryGetGlobal, cuLibraryGetManaged: a module
 * (or library) and a variable's name in, its address and size out. */
typedef struct { CUdeviceptr *dptr; size_t *bytes; void *hmod; const char *name; } p_cuModuleGetGlobal;
/* cuMemAllocPitch_v2 */
typedef struct { CUdeviceptr *dptr; size_t *pPitch; size_t WidthInBytes; size_t Height; unsigned int ElementSizeBytes; } p_cuMemAllocPitch;
/* cuMemAllocHost_v2 (pp, bytesize), cuMemHostAlloc (one more unsigned Flags after) */
typedef struct { void **pp; size_t bytesize; } p_cuMemAllocHost;
/* cuMemHostRegister(_v2) (p, bytesize, Flags) */
typedef struct { void *p; size_t bytesize; unsigned int Flags; } p_cuMemHostRegister;
/* cuMemFreeHost, cuMemHostUnregister: the host address, read as p_cuMemFree's dptr at entry (releases.c) */
typedef struct { void *p; } p_cuMemFreeHost;
/* Virtual memory management: cuMemMap(ptr, size, offset, handle, flags),
 * cuMemUnmap(ptr, size). A CUmemGenericAllocationHandle is an unsigned long long. */
typedef struct { CUdeviceptr ptr; size_t size; size_t offset; unsigned long long handle; unsigned long long flags; } p_cuMemMap;
typedef struct { CUdeviceptr ptr; size_t size; } p_cuMemUnmap;
/* Pool attributes: cuMemPoolSetAttribute(pool, attr, value), cuDeviceSetMemPool(dev, pool),
 * cuMemPoolTrimTo(pool, minBytesToKeep), and CUDA 13's cuMemSetMemPool(location, type, pool). */
typedef struct { CUmemoryPool pool; int attr; void *value; } p_cuMemPoolSetAttribute;
typedef struct { CUdevice dev; CUmemoryPool pool; } p_cuDeviceSetMemPool;
typedef struct { CUmemoryPool pool; size_t minBytesToKeep; } p_cuMemPoolTrimTo;
typedef struct { int type; int id; } sc_CUmemLocation; /* CUmemLocation */
typedef struct { const sc_CUmemLocation *location; int type; CUmemoryPool pool; } p_cuMemSetMemPool;
#define SC_MEM_LOCATION_TYPE_DEVICE 1   /* CU_MEM_LOCATION_TYPE_DEVICE */
#define SC_MEM_ALLOCATION_TYPE_PINNED 1 /* CU_MEM_ALLOCATION_TYPE_PINNED: the pool cuMemAllocAsync takes from */
/* CUmemPool_attribute: 1-3 (the reuse policies) take an int, 4-8 (the
 * release threshold, the reserved and used memory counters) a cuuint64_t. */
#define SC_MEMPOOL_ATTR_REUSE_FIRST 1
#define SC_MEMPOOL_ATTR_REUSE_LAST 3
#define SC_MEMPOOL_ATTR_RELEASE_THRESHOLD 4 /* ops.h's POOL_ATTR_RELEASE_THRESHOLD, the model's */
#define SC_MEMPOOL_ATTR_USED_MEM_HIGH 8
/* cuMemFreeAsync */
typedef struct { CUdeviceptr dptr; CUstream hStream; } p_cuMemFreeAsync;
/* cuMemFree_v2 */
typedef struct { CUdeviceptr dptr; } p_cuMemFree;
/* cuLaunchKernel */
typedef struct {
    CUfunction f;
    unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
    CUstream hStream;
    void **kernelParams;
    void **extra;
} p_cuLaunchKernel;
/* cuLaunchCooperativeKernel: cuLaunchKernel without extra. */
typedef struct {
    CUfunction f;
    unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
    CUstream hStream;
    void **kernelParams;
} p_cuLaunchCooperativeKernel;
/* cuLaunchKernelEx */
typedef struct { const sc_CUlaunchConfig *config; CUfunction f; void **kernelParams; void **extra; } p_cuLaunchKernelEx;
/* cuMemcpyBatchAsync (CUDA 12.8: failIdx before the stream) and _v2 (CUDA
 * 13: without it): count copies, dsts[i] <- srcs[i], sizes[i] bytes. */
/* CUmemcpyAttributes: srcAccessOrder, srcLocHint and dstLocHint
 * (CUmemLocation: type and id), flags. attrs[k] applies to the copies from
 * attrsIdxs[k] to the next one's. */
typedef struct {
    int srcAccessOrder;
    int srcLocType, srcLocId, dstLocType, dstLocId;
    unsigned int flags;
} sc_memcpy_attributes;
#define SC_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL 2 /* the source is read before the call returns */
/* The parameters both versions start with: the batch itself. */
typedef struct {
    const CUdeviceptr *dsts, *srcs;
    const size_t *sizes;
    size_t count;
    const sc_memcpy_attributes *attrs;
    const size_t *attrsIdxs;
    size_t numAttrs;
} sc_batch;
typedef struct {
    sc_batch batch;
    size_t *failIdx;
    CUstream hStream;
} p_cuMemcpyBatchAsync;
typedef struct {
    sc_batch batch;
    CUstream hStream;
} p_cuMemcpyBatchAsync_v2;
/* cuMemcpyWithAttributesAsync (CUDA 13.1): one copy with its attributes. */
typedef struct {
    CUdeviceptr dst, src;
    size_t size;
    const sc_memcpy_attributes *attr;
    CUstream hStream;
} p_cuMemcpyWithAttributesAsync;
/* CUmemcpy3DOperand: a pointer (with its row length and layer height in
 * elements, 0 for packed) or a CUDA array (with a 3D offset). */
#define SC_MEMCPY_OPERAND_POINTER 1
typedef struct {
    uint32_t type;
    union {
        struct {
            CUdeviceptr ptr;
            size_t rowLength, layerHeight;
            int locType, locId;
        } ptr;
        struct {
            void *array;
            size_t x, y, z;
        } array;
    } op;
} sc_memcpy3d_operand;
/* CUDA_MEMCPY3D_BATCH_OP: the extent is in elements, of 1 byte between
 * two pointers, of the CUDA array's element size otherwise (not read: the
 * recorded size of such a copy is in elements, short of its bytes; the
 * analyzer uses only a copy's first byte). */
typedef struct {
    sc_memcpy3d_operand src, dst;
    size_t width, height, depth;
    int srcAccessOrder;
    unsigned int flags;
} sc_memcpy3d_op;
_Static_assert(sizeof(sc_memcpy3d_operand) == 40, "CUmemcpy3DOperand is 40 bytes");
_Static_assert(sizeof(sc_memcpy3d_op) == 112, "CUDA_MEMCPY3D_BATCH_OP is 112 bytes");
/* cuMemcpy3DBatchAsync (CUDA 12.8: with failIdx) and _v2 (CUDA 13) */
typedef struct {
    size_t numOps;
    const sc_memcpy3d_op *opList;
    size_t *failIdx;
    unsigned long long flags;
    CUstream hStream;
} p_cuMemcpy3DBatchAsync;
typedef struct {
    size_t numOps;
    const sc_memcpy3d_op *opList;
    unsigned long long flags;
    CUstream hStream;
} p_cuMemcpy3DBatchAsync_v2;
/* cuMemcpy3DWithAttributesAsync (CUDA 13.1): one such copy. */
typedef struct {
    const sc_memcpy3d_op *op;
    unsigned long long flags;
    CUstream hStream;
} p_cuMemcpy3DWithAttributesAsync;
/* cuMemcpy, cuMemcpyDtoD_v2 (dst, src, n); + hStream for the Async forms */
typedef struct { CUdeviceptr dst; CUdeviceptr src; size_t ByteCount; CUstream hStream; } p_cuMemcpy;
/* cuMemcpyHtoD_v2(+Async) */
typedef struct { CUdeviceptr dstDevice; const void *srcHost; size_t ByteCount; CUstream hStream; } p_cuMemcpyHtoD;
/* cuMemcpyDtoH_v2(+Async) */
typedef struct { void *dstHost; CUdeviceptr srcDevice; size_t ByteCount; CUstream hStream; } p_cuMemcpyDtoH;
/* cuMemcpyPeer(+Async) */
typedef struct { CUdeviceptr dstDevice; CUcontext dstContext; CUdeviceptr srcDevice; CUcontext srcContext; size_t ByteCount; CUstream hStream; } p_cuMemcpyPeer;
/* cuMemcpy2D_v2, cuMemcpy2DUnaligned_v2, cuMemcpy2DAsync_v2 */
typedef struct { const sc_CUDA_MEMCPY2D *pCopy; CUstream hStream; } p_cuMemcpy2D;
/* cuMemcpy3D_v2, cuMemcpy3DAsync_v2 */
typedef struct { const sc_CUDA_MEMCPY3D *pCopy; CUstream hStream; } p_cuMemcpy3D;
/* cuMemcpy3DPeer, cuMemcpy3DPeerAsync */
typedef struct { const sc_CUDA_MEMCPY3D_PEER *pCopy; CUstream hStream; } p_cuMemcpy3DPeer;
/* cuMemsetD8_v2 (+Async) */
typedef struct { CUdeviceptr dstDevice; unsigned char uc; size_t N; CUstream hStream; } p_cuMemsetD8;
/* cuMemsetD16_v2 (+Async) */
typedef struct { CUdeviceptr dstDevice; unsigned short us; size_t N; CUstream hStream; } p_cuMemsetD16;
/* cuMemsetD32_v2 (+Async) */
typedef struct { CUdeviceptr dstDevice; unsigned int ui; size_t N; CUstream hStream; } p_cuMemsetD32;
/* cuMemsetD2D8_v2 (+Async) */
typedef struct { CUdeviceptr dstDevice; size_t dstPitch; unsigned char uc; size_t Width; size_t Height; CUstream hStream; } p_cuMemsetD2D8;
/* cuMemsetD2D16_v2 (+Async) */
typedef struct { CUdeviceptr dstDevice; size_t dstPitch; unsigned short us; size_t Width; size_t Height; CUstream hStream; } p_cuMemsetD2D16;
/* cuMemsetD2D32_v2 (+Async) */
typedef struct { CUdeviceptr dstDevice; size_t dstPitch; unsigned int ui; size_t Width; size_t Height; CUstream hStream; } p_cuMemsetD2D32;
/* cuLaunchHostFunc(hStream, fn, userData), cuStreamAddCallback(hStream, cb, userData, flags) */
typedef struct { CUstream hStream; void *fn; void *userData; } p_cuLaunchHostFunc;
/* cuStreamEndCapture */
typedef struct { CUstream hStream; CUgraph *phGraph; } p_cuStreamEndCapture;
/* cuGraphLaunch */
typedef struct { CUgraphExec hGraphExec; CUstream hStream; } p_cuGraphLaunch;
/* cuGraphInstantiate, _v2, WithFlags and WithParams all start so */
typedef struct { CUgraphExec *phGraphExec; CUgraph hGraph; } p_graph_instantiate;
/* The first two parameters of a call, each a handle or a pointer to one:
 * the calls that change a graph's work (H_GRAPH_FORGET), and
 * cuStreamBeginCaptureToGraph (a stream, then the graph). */
typedef struct { void *first; void *second; } p_first_two;
typedef struct { void *first; void *second; void *third; } p_first_three;
/* cuGraphExecUpdate and _v2 */
typedef struct { CUgraphExec hGraphExec; CUgraph hGraph; } p_graph_exec_update;
/* cuMemPoolCreate */
typedef struct { CUmemoryPool *pool; const void *poolProps; } p_cuMemPoolCreate;
/* Interprocess sharing. CUmemPoolPtrExportData, CUipcEventHandle and
 * CUipcMemHandle are 64 opaque bytes (a struct of a char array, so a
 * handle passed by value sits right after the pointer before it). */
typedef struct { unsigned char reserved[64]; } sc_ipc_data;
/* cuMemPoolExportToShareableHandle(handle_out, pool, handleType, flags) */
typedef struct { void *handle_out; CUmemoryPool pool; int handleType; unsigned long long flags; } p_cuMemPoolExportToShareableHandle;
/* cuMemPoolImportFromShareableHandle(pool_out, handle, handleType, flags) */
typedef struct { CUmemoryPool *pool_out; void *handle; int handleType; unsigned long long flags; } p_cuMemPoolImportFromShareableHandle;
/* cuMemPoolExportPointer(shareData_out, ptr) */
typedef struct { sc_ipc_data *shareData_out; CUdeviceptr ptr; } p_cuMemPoolExportPointer;
/* cuMemPoolImportPointer(ptr_out, pool, shareData) */
typedef struct { CUdeviceptr *ptr_out; CUmemoryPool pool; const sc_ipc_data *shareData; } p_cuMemPoolImportPointer;
/* cuIpcGetEventHandle(pHandle, event) */
typedef struct { sc_ipc_data *pHandle; CUevent event; } p_cuIpcGetEventHandle;
/* cuIpcOpenEventHandle(phEvent, handle): the handle by value */
typedef struct { CUevent *phEvent; sc_ipc_data handle; } p_cuIpcOpenEventHandle;
/* cuIpcGetMemHandle(pHandle, dptr) */
typedef struct { sc_ipc_data *pHandle; CUdeviceptr dptr; } p_cuIpcGetMemHandle;
/* cuIpcOpenMemHandle(_v2)(pdptr, handle, Flags): the handle by value */
typedef struct { CUdeviceptr *pdptr; sc_ipc_data handle; unsigned int Flags; } p_cuIpcOpenMemHandle;
/* cuIpcCloseMemHandle(dptr): as p_cuMemFree */
_Static_assert(offsetof(p_cuIpcOpenEventHandle, handle) == 8 && sizeof(p_cuIpcOpenEventHandle) == 72,
               "cuIpcOpenEventHandle_params: the event pointer, then the 64-byte handle");
_Static_assert(offsetof(p_cuIpcOpenMemHandle, Flags) == 72, "cuIpcOpenMemHandle_v2_params: Flags after the handle");

/* Graph memory allocation nodes. The node parameters are read at byte
 * offsets: CUDA_MEM_ALLOC_NODE_PARAMS (v1 and v2 alike) has bytesize at 104
 * and the dptr the driver fills in at 112; CUgraphNodeParams has its type
 * at 0 and that struct at 16 (offsets printed by a program compiled
 * against CUDA 13.0's cuda.h on the GPU machine). */
/* cuGraphAddMemAllocNode and cuGraphAddNode take the same parameters. */
typedef struct {
    void *phGraphNode;
    CUgraph hGraph;
    const void *dependencies;
    size_t numDependencies;
    const unsigned char *nodeParams;
} p_graph_add_node;
typedef struct {
    void *phGraphNode;
    CUgraph hGraph;
    const void *dependencies;
    const void *dependencyData;
    size_t numDependencies;
    const unsigned char *nodeParams;
} p_cuGraphAddNode_v2;
#define SC_MEM_ALLOC_NODE_BYTESIZE 104
#define SC_MEM_ALLOC_NODE_DPTR 112
#define SC_GRAPH_NODE_PARAMS_UNION 16 /* where the node type's own parameters start */
#define SC_GRAPH_NODE_TYPE_MEM_ALLOC 10
/* Event wait and record nodes: CUgraphNodeParams's union holds a
 * CUDA_EVENT_WAIT_NODE_PARAMS or CUDA_EVENT_RECORD_NODE_PARAMS, whose one
 * member is the CUevent. */
#define SC_GRAPH_NODE_TYPE_WAIT_EVENT 6
#define SC_GRAPH_NODE_TYPE_EVENT_RECORD 7
/* Kernel, copy and set nodes. cuGraphAddKernelNode (v1 and _v2),
 * cuGraphAddMemcpyNode and cuGraphAddMemsetNode take (phGraphNode, hGraph,
 * dependencies, numDependencies, nodeParams, ...), as p_graph_add_node.
 * CUDA_KERNEL_NODE_PARAMS v1 stops after extra; v2 and v3 (the one in
 * CUgraphNodeParams) add kern, the kernel when func is NULL. */
#define SC_GRAPH_NODE_TYPE_KERNEL 0
#define SC_GRAPH_NODE_TYPE_MEMCPY 1
#define SC_GRAPH_NODE_TYPE_MEMSET 2
typedef struct {
    CUfunction func;
    unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
    void **kernelParams;
    void **extra;
    CUkernel kern; /* v2 and v3 only */
} sc_kernel_node_params;
/* CUDA_MEMSET_NODE_PARAMS (v1; v2 adds a context after height) */
typedef struct {
    CUdeviceptr dst;
    size_t pitch;
    unsigned int value, elementSize;
    size_t width, height;
} sc_memset_node_params;
/* CUDA_MEMCPY_NODE_PARAMS: flags, reserved, copyCtx, then a CUDA_MEMCPY3D. */
#define SC_MEMCPY_NODE_COPY 16

/* cuStreamWaitValue32/64 and cuStreamWriteValue32/64 (and _v2): the
 * stream, the address, the value (4 or 8 bytes) and the flags. */
typedef struct { CUstream stream; CUdeviceptr addr; } p_stream_memop;
typedef struct { CUstream stream; CUdeviceptr addr; uint32_t value; unsigned int flags; } p_stream_memop32;
typedef struct { CUstream stream; CUdeviceptr addr; uint64_t value; unsigned int flags; } p_stream_memop64;
/* CUstreamBatchMemOpType */
enum {
    SC_MEMOP_WAIT32 = 1,
    SC_MEMOP_WRITE32 = 2,
    SC_MEMOP_FLUSH = 3,
    SC_MEMOP_WAIT64 = 4,
    SC_MEMOP_WRITE64 = 5,
    SC_MEMOP_BARRIER = 6,
    SC_MEMOP_ATOMIC = 8, /* CUDA 13.1: an atomic reduction (add, and, or) */
};
/* CUstreamBatchMemOpParams: a 48-byte union whose wait and write members
 * are laid out alike (a 32-bit value in the low half of value64); flush and
 * barrier have the flags right after the operation. */
typedef struct {
    uint32_t operation;
    CUdeviceptr address;
    uint64_t value64;
    unsigned int flags;
    CUdeviceptr alias;
    uint64_t pad_; /* to the union's 48 bytes */
} sc_memop_params;
typedef struct { uint32_t operation; unsigned int flags; } sc_memop_flags_only;
/* CUstreamMemOpAtomicReductionParams: the address and operand after the
 * operation, flags, reduction and data type. */
typedef struct {
    uint32_t operation;
    unsigned int flags;
    uint32_t reductionOp, dataType;
    CUdeviceptr address;
    uint64_t value;
} sc_memop_atomic;
_Static_assert(sizeof(sc_memop_params) == 48, "CUstreamBatchMemOpParams is 48 bytes");
/* CUDA_BATCH_MEM_OP_NODE_PARAMS (v1 and v2, alike): a batch memory
 * operation node's context and operations. */
#define SC_GRAPH_NODE_TYPE_BATCH_MEM_OP 12
typedef struct {
    void *ctx;
    unsigned int count;
    const sc_memop_params *paramArray;
    unsigned int flags;
} sc_memop_node_params;
/* cuStreamBatchMemOp(_v2) */
typedef struct {
    CUstream stream;
    unsigned int count;
    const sc_memop_params *paramArray;
    unsigned int flags;
} p_cuStreamBatchMemOp;

/* cuGraphClone */
typedef struct { CUgraph *phGraphClone; CUgraph originalGraph; } p_graph_clone;
/* cuGraphAddChildGraphNode */
typedef struct {
    CUgraphNode *phGraphNode;
    CUgraph hGraph;
    const void *dependencies;
    size_t numDependencies;
    CUgraph childGraph;
} p_graph_add_child;
/* cuGraphAddNode of a child graph: CUDA_CHILD_GRAPH_NODE_PARAMS starts with the graph. */
#define SC_GRAPH_NODE_TYPE_GRAPH 4
/* Host and empty nodes: no device memory and no event. */
#define SC_GRAPH_NODE_TYPE_HOST 3
#define SC_GRAPH_NODE_TYPE_EMPTY 5
/* cuGraphAddNode of a conditional node: CUDA_CONDITIONAL_NODE_PARAMS, whose
 * phGraph_out the driver points at its array of size body graphs. */
#define SC_GRAPH_NODE_TYPE_CONDITIONAL 13
typedef struct {
    uint64_t handle;
    int type;
    unsigned int size;
    CUgraph *phGraph_out;
    void *ctx;
} sc_conditional_node_params;

/* cuGraphAddEventRecordNode and cuGraphAddEventWaitNode */
typedef struct {
    CUgraphNode *phGraphNode;
    CUgraph hGraph;
    const void *dependencies;
    size_t numDependencies;
    CUevent event;
} p_graph_add_event_node;
/* cuGraphEventRecordNodeSetEvent and cuGraphEventWaitNodeSetEvent */
typedef struct { CUgraphNode hNode; CUevent event; } p_graph_node_set_event;
/* cuGraphExecEventRecordNodeSetEvent and cuGraphExecEventWaitNodeSetEvent */
typedef struct { CUgraphExec hGraphExec; CUgraphNode hNode; CUevent event; } p_graph_exec_set_event;
/* cuGraphNodeSetParams */
typedef struct { CUgraphNode hNode; const unsigned char *nodeParams; } p_graph_node_set_params;
/* cuGraphExecNodeSetParams */
typedef struct { CUgraphExec hGraphExec; CUgraphNode hNode; const unsigned char *nodeParams; } p_graph_exec_set_params;

/* Layouts measured with CUDA 13.0's own headers on the GPU machine
 * (scripts/probe.sh, docs/gpu/cupti-abi-probe.txt): a declaration above
 * that drifts from them fails the build. */
#define SC_ABI_AT(type, field, off) _Static_assert(offsetof(type, field) == (off), #type "." #field " at " #off)
_Static_assert(sizeof(sc_CUpti_CallbackData) == 72, "CUpti_CallbackData is 72 bytes");
SC_ABI_AT(sc_CUpti_CallbackData, functionName, 8);
SC_ABI_AT(sc_CUpti_CallbackData, functionParams, 16);
SC_ABI_AT(sc_CUpti_CallbackData, functionReturnValue, 24);
SC_ABI_AT(sc_CUpti_CallbackData, symbolName, 32);
SC_ABI_AT(sc_CUpti_CallbackData, context, 40);
SC_ABI_AT(sc_CUpti_CallbackData, contextUid, 48);
SC_ABI_AT(sc_CUpti_CallbackData, correlationData, 56);
SC_ABI_AT(sc_CUpti_CallbackData, correlationId, 64);
SC_ABI_AT(p_cuLaunchKernel, hStream, 40);
SC_ABI_AT(p_cuLaunchKernel, kernelParams, 48);
SC_ABI_AT(p_cuLaunchKernel, extra, 56);
SC_ABI_AT(p_cuLaunchKernelEx, config, 0);
SC_ABI_AT(p_cuLaunchKernelEx, kernelParams, 16);
SC_ABI_AT(sc_CUlaunchConfig, hStream, 32);
SC_ABI_AT(p_cuMemAllocAsync, hStream, 16);
SC_ABI_AT(p_cuMemAllocFromPoolAsync, pool, 16);
SC_ABI_AT(p_cuMemAllocFromPoolAsync, hStream, 24);
SC_ABI_AT(p_cuMemcpy2D, hStream, 8);
/* generated_cuda_meta.h's layouts of the allocation families' and pool
 * attributes' parameters (natural alignment: the CUDA 13.0 headers'). */
SC_ABI_AT(p_cuMemAllocPitch, ElementSizeBytes, 32);
SC_ABI_AT(p_cuMemHostRegister, Flags, 16);
SC_ABI_AT(p_cuMemMap, handle, 24);
SC_ABI_AT(p_cuMemPoolSetAttribute, value, 16);
SC_ABI_AT(p_cuDeviceSetMemPool, pool, 8);
SC_ABI_AT(p_cuMemSetMemPool, pool, 16);
SC_ABI_AT(p_cuLaunchCooperativeKernel, hStream, 40);
SC_ABI_AT(p_cuStreamWaitEvent, Flags, 16);
SC_ABI_AT(sc_CUDA_MEMCPY2D, srcDevice, 32);
SC_ABI_AT(sc_CUDA_MEMCPY2D, dstDevice, 88);
SC_ABI_AT(sc_CUDA_MEMCPY2D, WidthInBytes, 112);
SC_ABI_AT(sc_CUDA_MEMCPY3D, srcDevice, 48);
SC_ABI_AT(sc_CUDA_MEMCPY3D, dstDevice, 136);
SC_ABI_AT(sc_CUDA_MEMCPY3D, WidthInBytes, 176);
SC_ABI_AT(sc_CUDA_MEMCPY3D, Depth, 192);
_Static_assert(CU_POINTER_ATTRIBUTE_MEMORY_TYPE == 2 && CU_MEMORYTYPE_HOST == 1, "cuda.h's values");
#undef SC_ABI_AT

#endif
