/*
 * drvcalls.h: the driver functions the shim records, in one table that both
 * backends read: the CUPTI backend (apitable.c) finds their callback ids by
 * name, the interposition backend (interpose.c) builds its wrappers from the
 * signatures.
 *
 * SC_DRIVER_CALLS(X, X0) expands X once a function with parameters and X0
 * once a function without:
 *
 *   X(name, decoder, async, elem, pt, since, (type, param)...)
 *
 *   name     the exported name, version suffix included: a suffix can change
 *            the layout (cuMemAlloc v1 had 32-bit pointers), so only layouts
 *            we know are read
 *   decoder  decode.h's sc_dec_*; async and elem as sc_api_row's
 *   pt       PT_NONE, or PT_SZ / PT_DS: libcuda also exports name_ptsz /
 *            name_ptds, the per-thread-default-stream entry point with the
 *            same parameters, whose stream 0 is the thread's own stream
 *   since    the cudaVersion from which cuGetProcAddress hands out this
 *            variant for the name without its _vN suffix (cudaTypedefs.h's
 *            PFN_<name>_v<since>); 0 when there is one variant; SC_OWN_NAME
 *            when it is never handed out for the plain name
 *   params   the parameters in order, each (type, name), as cuda.h declares
 *            them (CUDA 13.0; enums as int, descriptor pointers as void *):
 *            CUPTI's "_params" struct is these members in this order, so the
 *            struct a wrapper builds from them is laid out as the decoders
 *            read it
 */
#ifndef STREAMCHECK_DRVCALLS_H
#define STREAMCHECK_DRVCALLS_H

enum { PT_NONE, PT_SZ, PT_DS };
#define SC_OWN_NAME (-1)

/* SC_MAP and the parameter spellings, for the code that builds from the
 * rows' parameters: a row's "_params" struct is
 * struct { SC_MAP(SC_P_FIELD, SC_NOSEP, params) } (interpose.c's wrappers,
 * apitable.c's sizes). */
#define SC_NARGS(...) SC_NARGS_(__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define SC_NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, N, ...) N
#define SC_CAT(a, b) SC_CAT_(a, b)
#define SC_CAT_(a, b) a##b
/* SC_MAP(m, sep, (T, n)...): m(T, n) for each, sep() between. */
#define SC_MAP(m, sep, ...) SC_CAT(SC_MAP_, SC_NARGS(__VA_ARGS__))(m, sep, __VA_ARGS__)
#define SC_MAP_1(m, s, a) m a
#define SC_MAP_2(m, s, a, ...) m a s() SC_MAP_1(m, s, __VA_ARGS__)
#define SC_MAP_3(m, s, a, ...) m a s() SC_MAP_2(m, s, __VA_ARGS__)
#define SC_MAP_4(m, s, a, ...) m a s() SC_MAP_3(m, s, __VA_ARGS__)
#define SC_MAP_5(m, s, a, ...) m a s() SC_MAP_4(m, s, __VA_ARGS__)
#define SC_MAP_6(m, s, a, ...) m a s() SC_MAP_5(m, s, __VA_ARGS__)
#define SC_MAP_7(m, s, a, ...) m a s() SC_MAP_6(m, s, __VA_ARGS__)
#define SC_MAP_8(m, s, a, ...) m a s() SC_MAP_7(m, s, __VA_ARGS__)
#define SC_MAP_9(m, s, a, ...) m a s() SC_MAP_8(m, s, __VA_ARGS__)
#define SC_MAP_10(m, s, a, ...) m a s() SC_MAP_9(m, s, __VA_ARGS__)
#define SC_MAP_11(m, s, a, ...) m a s() SC_MAP_10(m, s, __VA_ARGS__)
#define SC_MAP_12(m, s, a, ...) m a s() SC_MAP_11(m, s, __VA_ARGS__)
#define SC_COMMA() ,
#define SC_NOSEP()
#define SC_P_FIELD(T, n) T n;
#define SC_P_DECL(T, n) T n
#define SC_P_TYPE(T, n) T
#define SC_P_NAME(T, n) n

/* Parameter type spellings used below. */
typedef unsigned int sc_uint;
typedef unsigned long long sc_ull;

#define SC_DRIVER_CALLS(X, X0)                                                                                         \
    X(cuStreamCreate, sc_dec_stream_create, 0, 0, PT_NONE, 0, (CUstream *, phStream), (sc_uint, Flags))                \
    X(cuStreamCreateWithPriority, sc_dec_stream_create_prio, 0, 0, PT_NONE, 0, (CUstream *, phStream), (sc_uint, flags), \
      (int, priority))                                                                                                 \
    X(cuStreamDestroy, sc_dec_stream_destroy, 0, 0, PT_NONE, 2000, (CUstream, hStream))                                \
    X(cuStreamDestroy_v2, sc_dec_stream_destroy, 0, 0, PT_NONE, 4000, (CUstream, hStream))                             \
    X(cuEventCreate, sc_dec_event_create, 0, 0, PT_NONE, 0, (CUevent *, phEvent), (sc_uint, Flags))                    \
    X(cuEventRecord, sc_dec_event_record, 0, 0, PT_SZ, 0, (CUevent, hEvent), (CUstream, hStream))                      \
    X(cuEventRecordWithFlags, sc_dec_event_record, 0, 1, PT_SZ, 0, (CUevent, hEvent), (CUstream, hStream),             \
      (sc_uint, flags))                                                                                                \
    X(cuEventDestroy, sc_dec_event_destroy, 0, 0, PT_NONE, 2000, (CUevent, hEvent))                                    \
    X(cuEventDestroy_v2, sc_dec_event_destroy, 0, 0, PT_NONE, 4000, (CUevent, hEvent))                                 \
    X(cuStreamWaitEvent, sc_dec_stream_wait, 0, 0, PT_SZ, 0, (CUstream, hStream), (CUevent, hEvent), (sc_uint, Flags))  \
    X(cuStreamSynchronize, sc_dec_stream_sync, 0, 0, PT_SZ, 0, (CUstream, hStream))                                    \
    X(cuEventSynchronize, sc_dec_event_sync, 0, 0, PT_NONE, 0, (CUevent, hEvent))                                      \
    X0(cuCtxSynchronize, sc_dec_ctx_sync, 0, 0, PT_NONE, 0)                                                             \
    X(cuCtxSynchronize_v2, sc_dec_ctx_sync, 0, 0, PT_NONE, SC_OWN_NAME, (CUcontext, ctx))                              \
    X(cuStreamQuery, sc_dec_stream_query, 0, 0, PT_SZ, 0, (CUstream, hStream))                                         \
    X(cuEventQuery, sc_dec_event_query, 0, 0, PT_NONE, 0, (CUevent, hEvent))                                           \
    X(cuMemAllocAsync, sc_dec_malloc_async, 1, 0, PT_SZ, 0, (CUdeviceptr *, dptr), (size_t, bytesize),                 \
      (CUstream, hStream))                                                                                             \
    X(cuMemAllocFromPoolAsync, sc_dec_malloc_pool, 1, 0, PT_SZ, 0, (CUdeviceptr *, dptr), (size_t, bytesize),          \
      (CUmemoryPool, pool), (CUstream, hStream))                                                                       \
    X(cuMemAlloc_v2, sc_dec_malloc, 0, FAMILY_DEVICE, PT_NONE, 3020, (CUdeviceptr *, dptr), (size_t, bytesize))       \
    X(cuMemAllocManaged, sc_dec_malloc, 0, FAMILY_MANAGED, PT_NONE, 0, (CUdeviceptr *, dptr), (size_t, bytesize),      \
      (sc_uint, flags))                                                                                                \
    X(cuMemAllocPitch_v2, sc_dec_malloc_pitch, 0, 0, PT_NONE, 3020, (CUdeviceptr *, dptr), (size_t *, pPitch),         \
      (size_t, WidthInBytes), (size_t, Height), (sc_uint, ElementSizeBytes))                                           \
    X(cuMemAllocHost_v2, sc_dec_malloc_host, 0, 0, PT_NONE, 3020, (void **, pp), (size_t, bytesize))                  \
    X(cuMemHostAlloc, sc_dec_malloc_host, 0, 0, PT_NONE, 0, (void **, pp), (size_t, bytesize), (sc_uint, Flags))       \
    X(cuMemHostRegister, sc_dec_host_register, 0, 0, PT_NONE, 4000, (void *, p), (size_t, bytesize), (sc_uint, Flags)) \
    X(cuMemHostRegister_v2, sc_dec_host_register, 0, 0, PT_NONE, 6050, (void *, p), (size_t, bytesize),                \
      (sc_uint, Flags))                                                                                                \
    X(cuMemFreeAsync, sc_dec_free_async, 1, 0, PT_SZ, 0, (CUdeviceptr, dptr), (CUstream, hStream))                     \
    X(cuMemFree_v2, sc_dec_free, 0, 0, PT_NONE, 3020, (CUdeviceptr, dptr))                                             \
    X(cuMemFreeHost, sc_dec_free_host, 0, FAMILY_HOST, PT_NONE, 0, (void *, p))                                        \
    X(cuMemHostUnregister, sc_dec_free_host, 0, FAMILY_REGISTERED, PT_NONE, 0, (void *, p))                            \
    X(cuMemMap, sc_dec_vmm_map, 0, 0, PT_NONE, 0, (CUdeviceptr, ptr), (size_t, size), (size_t, offset),                \
      (sc_ull, handle), (sc_ull, flags))                                                                               \
    X(cuMemUnmap, sc_dec_vmm_unmap, 0, 0, PT_NONE, 0, (CUdeviceptr, ptr), (size_t, size))                              \
    X(cuMemPoolSetAttribute, sc_dec_pool_set_attr, 0, 0, PT_NONE, 0, (CUmemoryPool, pool), (int, attr),                \
      (void *, value))                                                                                                 \
    X(cuDeviceSetMemPool, sc_dec_device_set_pool, 0, 0, PT_NONE, 0, (CUdevice, dev), (CUmemoryPool, pool))             \
    X(cuMemSetMemPool, sc_dec_mem_set_pool, 0, 0, PT_NONE, 0, (void *, location), (int, type), (CUmemoryPool, pool))   \
    X(cuMemPoolTrimTo, sc_dec_pool_trim, 0, 0, PT_NONE, 0, (CUmemoryPool, pool), (size_t, minBytesToKeep))             \
    X(cuLaunchKernel, sc_dec_launch, 1, 0, PT_SZ, 0, (CUfunction, f), (sc_uint, gridDimX), (sc_uint, gridDimY),         \
      (sc_uint, gridDimZ), (sc_uint, blockDimX), (sc_uint, blockDimY), (sc_uint, blockDimZ),                           \
      (sc_uint, sharedMemBytes), (CUstream, hStream), (void **, kernelParams), (void **, extra))                      \
    X(cuLaunchCooperativeKernel, sc_dec_launch_coop, 1, 0, PT_SZ, 0, (CUfunction, f), (sc_uint, gridDimX),             \
      (sc_uint, gridDimY), (sc_uint, gridDimZ), (sc_uint, blockDimX), (sc_uint, blockDimY), (sc_uint, blockDimZ),     \
      (sc_uint, sharedMemBytes), (CUstream, hStream), (void **, kernelParams))                                        \
    X(cuLaunchKernelEx, sc_dec_launch_ex, 1, 0, PT_SZ, 0, (const void *, config), (CUfunction, f),                     \
      (void **, kernelParams), (void **, extra))                                                                       \
    X(cuMemcpy, sc_dec_cpy_unified, 0, 0, PT_DS, 0, (CUdeviceptr, dst), (CUdeviceptr, src), (size_t, ByteCount))       \
    X(cuMemcpyAsync, sc_dec_cpy_unified, 1, 0, PT_SZ, 0, (CUdeviceptr, dst), (CUdeviceptr, src), (size_t, ByteCount),  \
      (CUstream, hStream))                                                                                             \
    X(cuMemcpyHtoD_v2, sc_dec_cpy_htod, 0, 0, PT_DS, 3020, (CUdeviceptr, dstDevice), (const void *, srcHost),          \
      (size_t, ByteCount))                                                                                             \
    X(cuMemcpyHtoDAsync_v2, sc_dec_cpy_htod, 1, 0, PT_SZ, 3020, (CUdeviceptr, dstDevice), (const void *, srcHost),     \
      (size_t, ByteCount), (CUstream, hStream))                                                                        \
    X(cuMemcpyDtoH_v2, sc_dec_cpy_dtoh, 0, 0, PT_DS, 3020, (void *, dstHost), (CUdeviceptr, srcDevice),                \
      (size_t, ByteCount))                                                                                             \
    X(cuMemcpyDtoHAsync_v2, sc_dec_cpy_dtoh, 1, 0, PT_SZ, 3020, (void *, dstHost), (CUdeviceptr, srcDevice),           \
      (size_t, ByteCount), (CUstream, hStream))                                                                        \
    X(cuMemcpyDtoD_v2, sc_dec_cpy_dtod, 0, 0, PT_DS, 3020, (CUdeviceptr, dstDevice), (CUdeviceptr, srcDevice),         \
      (size_t, ByteCount))                                                                                             \
    X(cuMemcpyDtoDAsync_v2, sc_dec_cpy_dtod, 1, 0, PT_SZ, 3020, (CUdeviceptr, dstDevice), (CUdeviceptr, srcDevice),    \
      (size_t, ByteCount), (CUstream, hStream))                                                                        \
    X(cuMemcpyPeer, sc_dec_cpy_peer, 0, 0, PT_DS, 0, (CUdeviceptr, dstDevice), (CUcontext, dstContext),               \
      (CUdeviceptr, srcDevice), (CUcontext, srcContext), (size_t, ByteCount))                                          \
    X(cuMemcpyPeerAsync, sc_dec_cpy_peer, 1, 0, PT_SZ, 0, (CUdeviceptr, dstDevice), (CUcontext, dstContext),          \
      (CUdeviceptr, srcDevice), (CUcontext, srcContext), (size_t, ByteCount), (CUstream, hStream))                     \
    X(cuMemcpy2D_v2, sc_dec_cpy_2d, 0, 0, PT_DS, 3020, (const void *, pCopy))                                          \
    X(cuMemcpy2DUnaligned_v2, sc_dec_cpy_2d, 0, 0, PT_DS, 3020, (const void *, pCopy))                                 \
    X(cuMemcpy2DAsync_v2, sc_dec_cpy_2d, 1, 0, PT_SZ, 3020, (const void *, pCopy), (CUstream, hStream))                \
    X(cuMemcpy3D_v2, sc_dec_cpy_3d, 0, 0, PT_DS, 3020, (const void *, pCopy))                                          \
    X(cuMemcpy3DAsync_v2, sc_dec_cpy_3d, 1, 0, PT_SZ, 3020, (const void *, pCopy), (CUstream, hStream))                \
    X(cuMemcpy3DPeer, sc_dec_cpy_3dpeer, 0, 0, PT_DS, 0, (const void *, pCopy))                                        \
    X(cuMemcpy3DPeerAsync, sc_dec_cpy_3dpeer, 1, 0, PT_SZ, 0, (const void *, pCopy), (CUstream, hStream))              \
    X(cuStreamWaitValue32, sc_dec_stream_memop, 1, SC_MEMOP_WAIT32, PT_SZ, 8000, (CUstream, stream),                  \
      (CUdeviceptr, addr), (uint32_t, value), (sc_uint, flags))                                                       \
    X(cuStreamWaitValue32_v2, sc_dec_stream_memop, 1, SC_MEMOP_WAIT32, PT_SZ, 11070, (CUstream, stream),              \
      (CUdeviceptr, addr), (uint32_t, value), (sc_uint, flags))                                                       \
    X(cuStreamWaitValue64, sc_dec_stream_memop, 1, SC_MEMOP_WAIT64, PT_SZ, 9000, (CUstream, stream),                  \
      (CUdeviceptr, addr), (uint64_t, value), (sc_uint, flags))                                                       \
    X(cuStreamWaitValue64_v2, sc_dec_stream_memop, 1, SC_MEMOP_WAIT64, PT_SZ, 11070, (CUstream, stream),              \
      (CUdeviceptr, addr), (uint64_t, value), (sc_uint, flags))                                                       \
    X(cuStreamWriteValue32, sc_dec_stream_memop, 1, SC_MEMOP_WRITE32, PT_SZ, 8000, (CUstream, stream),                \
      (CUdeviceptr, addr), (uint32_t, value), (sc_uint, flags))                                                       \
    X(cuStreamWriteValue32_v2, sc_dec_stream_memop, 1, SC_MEMOP_WRITE32, PT_SZ, 11070, (CUstream, stream),            \
      (CUdeviceptr, addr), (uint32_t, value), (sc_uint, flags))                                                       \
    X(cuStreamWriteValue64, sc_dec_stream_memop, 1, SC_MEMOP_WRITE64, PT_SZ, 9000, (CUstream, stream),                \
      (CUdeviceptr, addr), (uint64_t, value), (sc_uint, flags))                                                       \
    X(cuStreamWriteValue64_v2, sc_dec_stream_memop, 1, SC_MEMOP_WRITE64, PT_SZ, 11070, (CUstream, stream),            \
      (CUdeviceptr, addr), (uint64_t, value), (sc_uint, flags))                                                       \
    X(cuStreamBatchMemOp, sc_dec_stream_memop, 1, 0, PT_SZ, 8000, (CUstream, stream), (sc_uint, count),               \
      (void *, paramArray), (sc_uint, flags))                                                                          \
    X(cuStreamBatchMemOp_v2, sc_dec_stream_memop, 1, 0, PT_SZ, 11070, (CUstream, stream), (sc_uint, count),           \
      (void *, paramArray), (sc_uint, flags))                                                                          \
    X(cuMemcpyBatchAsync, sc_dec_cpy_batch, 1, 1, PT_SZ, 12080, (CUdeviceptr *, dsts), (CUdeviceptr *, srcs),         \
      (size_t *, sizes), (size_t, count), (void *, attrs), (size_t *, attrsIdxs), (size_t, numAttrs),                  \
      (size_t *, failIdx), (CUstream, hStream))                                                                        \
    X(cuMemcpyBatchAsync_v2, sc_dec_cpy_batch, 1, 2, PT_SZ, 13000, (CUdeviceptr *, dsts), (CUdeviceptr *, srcs),      \
      (size_t *, sizes), (size_t, count), (void *, attrs), (size_t *, attrsIdxs), (size_t, numAttrs),                  \
      (CUstream, hStream))                                                                                             \
    X(cuMemcpyWithAttributesAsync, sc_dec_cpy_batch, 1, 3, PT_SZ, 0, (CUdeviceptr, dst), (CUdeviceptr, src),          \
      (size_t, size), (void *, attr), (CUstream, hStream))                                                             \
    X(cuMemcpy3DBatchAsync, sc_dec_cpy_3dbatch, 1, 1, PT_SZ, 12080, (size_t, numOps), (void *, opList),               \
      (size_t *, failIdx), (sc_ull, flags), (CUstream, hStream))                                                       \
    X(cuMemcpy3DBatchAsync_v2, sc_dec_cpy_3dbatch, 1, 2, PT_SZ, 13000, (size_t, numOps), (void *, opList),            \
      (sc_ull, flags), (CUstream, hStream))                                                                            \
    X(cuMemcpy3DWithAttributesAsync, sc_dec_cpy_3dbatch, 1, 3, PT_SZ, 0, (void *, op), (sc_ull, flags),               \
      (CUstream, hStream))                                                                                             \
    X(cuMemsetD8_v2, sc_dec_set, 0, 1, PT_DS, 3020, (CUdeviceptr, dstDevice), (unsigned char, uc), (size_t, N))        \
    X(cuMemsetD16_v2, sc_dec_set, 0, 2, PT_DS, 3020, (CUdeviceptr, dstDevice), (unsigned short, us), (size_t, N))      \
    X(cuMemsetD32_v2, sc_dec_set, 0, 4, PT_DS, 3020, (CUdeviceptr, dstDevice), (sc_uint, ui), (size_t, N))             \
    X(cuMemsetD8Async, sc_dec_set, 1, 1, PT_SZ, 0, (CUdeviceptr, dstDevice), (unsigned char, uc), (size_t, N),         \
      (CUstream, hStream))                                                                                             \
    X(cuMemsetD16Async, sc_dec_set, 1, 2, PT_SZ, 0, (CUdeviceptr, dstDevice), (unsigned short, us), (size_t, N),       \
      (CUstream, hStream))                                                                                             \
    X(cuMemsetD32Async, sc_dec_set, 1, 4, PT_SZ, 0, (CUdeviceptr, dstDevice), (sc_uint, ui), (size_t, N),              \
      (CUstream, hStream))                                                                                             \
    X(cuMemsetD2D8_v2, sc_dec_set2d, 0, 1, PT_DS, 3020, (CUdeviceptr, dstDevice), (size_t, dstPitch),                  \
      (unsigned char, uc), (size_t, Width), (size_t, Height))                                                          \
    X(cuMemsetD2D16_v2, sc_dec_set2d, 0, 2, PT_DS, 3020, (CUdeviceptr, dstDevice), (size_t, dstPitch),                 \
      (unsigned short, us), (size_t, Width), (size_t, Height))                                                         \
    X(cuMemsetD2D32_v2, sc_dec_set2d, 0, 4, PT_DS, 3020, (CUdeviceptr, dstDevice), (size_t, dstPitch), (sc_uint, ui),  \
      (size_t, Width), (size_t, Height))                                                                               \
    X(cuMemsetD2D8Async, sc_dec_set2d, 1, 1, PT_SZ, 0, (CUdeviceptr, dstDevice), (size_t, dstPitch),                   \
      (unsigned char, uc), (size_t, Width), (size_t, Height), (CUstream, hStream))                                     \
    X(cuMemsetD2D16Async, sc_dec_set2d, 1, 2, PT_SZ, 0, (CUdeviceptr, dstDevice), (size_t, dstPitch),                  \
      (unsigned short, us), (size_t, Width), (size_t, Height), (CUstream, hStream))                                    \
    X(cuMemsetD2D32Async, sc_dec_set2d, 1, 4, PT_SZ, 0, (CUdeviceptr, dstDevice), (size_t, dstPitch), (sc_uint, ui),   \
      (size_t, Width), (size_t, Height), (CUstream, hStream))                                                          \
    X(cuMemPrefetchAsync, sc_dec_range_on_stream, 1, OP_PREFETCH, PT_SZ, 8000, (CUdeviceptr, devPtr), (size_t, count), \
      (CUdevice, dstDevice), (CUstream, hStream))                                                                      \
    X(cuMemPrefetchAsync_v2, sc_dec_range_on_stream, 1, OP_PREFETCH, PT_SZ, 12020, (CUdeviceptr, devPtr),              \
      (size_t, count), (sc_CUmemLocation, location), (sc_uint, flags), (CUstream, hStream))                            \
    X(cuLaunchHostFunc, sc_dec_host_func, 1, 0, PT_SZ, 0, (CUstream, hStream), (void *, fn), (void *, userData))       \
    X(cuStreamAddCallback, sc_dec_host_func, 1, SC_HOSTFN_CALLBACK, PT_SZ, 0, (CUstream, hStream), (void *, callback),                 \
      (void *, userData), (sc_uint, flags))                                                                            \
    X(cuStreamBeginCapture, sc_dec_capture_begin, 1, 0, PT_SZ, 10000, (CUstream, hStream))                             \
    X(cuStreamBeginCapture_v2, sc_dec_capture_begin, 1, 0, PT_SZ, 10010, (CUstream, hStream), (int, mode))             \
    X(cuStreamBeginCaptureToGraph, sc_dec_capture_begin, 1, 1, PT_SZ, 0, (CUstream, hStream), (CUgraph, hGraph),       \
      (const void *, dependencies), (const void *, dependencyData), (size_t, numDependencies), (int, mode))            \
    X(cuStreamEndCapture, sc_dec_capture_end, 1, 0, PT_SZ, 0, (CUstream, hStream), (CUgraph *, phGraph))               \
    X(cuGraphLaunch, sc_dec_graph_launch, 1, 0, PT_SZ, 0, (CUgraphExec, hGraphExec), (CUstream, hStream))              \
    X(cuGraphInstantiate, sc_dec_graph_instantiate, 0, 0, PT_NONE, 10000, (CUgraphExec *, phGraphExec),                \
      (CUgraph, hGraph), (void *, phErrorNode), (char *, logBuffer), (size_t, bufferSize))                             \
    X(cuGraphInstantiate_v2, sc_dec_graph_instantiate, 0, 0, PT_NONE, 11000, (CUgraphExec *, phGraphExec),             \
      (CUgraph, hGraph), (void *, phErrorNode), (char *, logBuffer), (size_t, bufferSize))                             \
    X(cuGraphInstantiateWithFlags, sc_dec_graph_instantiate, 0, 0, PT_NONE, 0, (CUgraphExec *, phGraphExec),           \
      (CUgraph, hGraph), (sc_ull, flags))                                                                              \
    X(cuGraphInstantiateWithParams, sc_dec_graph_instantiate, 0, 0, PT_SZ, 0, (CUgraphExec *, phGraphExec),            \
      (CUgraph, hGraph), (void *, instantiateParams))                                                                  \
    X(cuGraphExecUpdate, sc_dec_graph_exec_update, 0, 0, PT_NONE, 10020, (CUgraphExec, hGraphExec), (CUgraph, hGraph), \
      (void *, hErrorNode_out), (void *, updateResult_out))                                                            \
    X(cuGraphExecUpdate_v2, sc_dec_graph_exec_update, 0, 0, PT_NONE, 12000, (CUgraphExec, hGraphExec),                 \
      (CUgraph, hGraph), (void *, resultInfo))                                                                         \
    X(cuMemPoolCreate, sc_dec_pool_create, 0, 0, PT_NONE, 0, (CUmemoryPool *, pool), (const void *, poolProps))        \
    X(cuGraphAddMemAllocNode, sc_dec_graph_alloc, 0, 0, PT_NONE, 0, (CUgraphNode *, phGraphNode), (CUgraph, hGraph),   \
      (const void *, dependencies), (size_t, numDependencies), (void *, nodeParams))                                   \
    X(cuGraphAddNode, sc_dec_graph_node, 0, 0, PT_NONE, 12020, (CUgraphNode *, phGraphNode), (CUgraph, hGraph),        \
      (const void *, dependencies), (size_t, numDependencies), (void *, nodeParams))                                   \
    X(cuGraphAddNode_v2, sc_dec_graph_node_v2, 0, 0, PT_NONE, 12030, (CUgraphNode *, phGraphNode), (CUgraph, hGraph),  \
      (const void *, dependencies), (const void *, dependencyData), (size_t, numDependencies), (void *, nodeParams))   \
    X(cuGraphCreate, sc_dec_graph_forget, 0, FORGET_NEW_GRAPH, PT_NONE, 0, (CUgraph *, phGraph), (sc_uint, flags))     \
    X(cuGraphClone, sc_dec_graph_clone, 0, 0, PT_NONE, 0, (CUgraph *, phGraphClone), (CUgraph, originalGraph))         \
    X(cuGraphDestroy, sc_dec_graph_forget, 0, FORGET_GRAPH, PT_NONE, 0, (CUgraph, hGraph))                             \
    X(cuGraphExecDestroy, sc_dec_graph_forget, 0, FORGET_EXEC_DESTROY, PT_NONE, 0, (CUgraphExec, hGraphExec))          \
    X(cuGraphExecKernelNodeSetParams, sc_dec_graph_forget, 0, FORGET_EXEC, PT_NONE, 10010, (CUgraphExec, hGraphExec),  \
      (CUgraphNode, hNode), (const void *, nodeParams))                                                                \
    X(cuGraphExecKernelNodeSetParams_v2, sc_dec_graph_forget, 0, FORGET_EXEC, PT_NONE, 12000,                          \
      (CUgraphExec, hGraphExec), (CUgraphNode, hNode), (const void *, nodeParams))                                     \
    X(cuGraphExecMemcpyNodeSetParams, sc_dec_graph_forget, 0, FORGET_EXEC, PT_NONE, 0, (CUgraphExec, hGraphExec),      \
      (CUgraphNode, hNode), (const void *, copyParams), (CUcontext, ctx))                                              \
    X(cuGraphExecMemsetNodeSetParams, sc_dec_graph_forget, 0, FORGET_EXEC, PT_NONE, 0, (CUgraphExec, hGraphExec),      \
      (CUgraphNode, hNode), (const void *, memsetParams), (CUcontext, ctx))                                            \
    X(cuGraphExecChildGraphNodeSetParams, sc_dec_graph_forget, 0, FORGET_EXEC_CHILD, PT_NONE, 0,                       \
      (CUgraphExec, hGraphExec), (CUgraphNode, hNode), (CUgraph, childGraph))                                          \
    X(cuGraphExecBatchMemOpNodeSetParams, sc_dec_graph_forget, 0, FORGET_EXEC_MEMOPS, PT_NONE, 0,                      \
      (CUgraphExec, hGraphExec), (CUgraphNode, hNode), (const void *, nodeParams))                                     \
    X(cuGraphExecNodeSetParams, sc_dec_graph_exec_set_params, 0, 0, PT_NONE, 0, (CUgraphExec, hGraphExec),             \
      (CUgraphNode, hNode), (void *, nodeParams))                                                                      \
    X(cuGraphNodeSetEnabled, sc_dec_graph_forget, 0, FORGET_EXEC_NODE, PT_NONE, 0, (CUgraphExec, hGraphExec),          \
      (CUgraphNode, hNode), (sc_uint, isEnabled))                                                                      \
    X(cuGraphAddKernelNode, sc_dec_graph_kernel_node, 0, 1, PT_NONE, 10000, (CUgraphNode *, phGraphNode),              \
      (CUgraph, hGraph), (const void *, dependencies), (size_t, numDependencies), (const void *, nodeParams))           \
    X(cuGraphAddKernelNode_v2, sc_dec_graph_kernel_node, 0, 2, PT_NONE, 12000, (CUgraphNode *, phGraphNode),           \
      (CUgraph, hGraph), (const void *, dependencies), (size_t, numDependencies), (const void *, nodeParams))          \
    X(cuGraphAddMemcpyNode, sc_dec_graph_memcpy_node, 0, 0, PT_NONE, 0, (CUgraphNode *, phGraphNode),                  \
      (CUgraph, hGraph), (const void *, dependencies), (size_t, numDependencies), (const void *, copyParams),          \
      (CUcontext, ctx))                                                                                                \
    X(cuGraphAddMemsetNode, sc_dec_graph_memset_node, 0, 0, PT_NONE, 0, (CUgraphNode *, phGraphNode),                  \
      (CUgraph, hGraph), (const void *, dependencies), (size_t, numDependencies), (const void *, memsetParams),        \
      (CUcontext, ctx))                                                                                                \
    X(cuGraphAddChildGraphNode, sc_dec_graph_child, 0, 0, PT_NONE, 0, (CUgraphNode *, phGraphNode), (CUgraph, hGraph), \
      (const void *, dependencies), (size_t, numDependencies), (CUgraph, childGraph))                                  \
    X(cuGraphAddBatchMemOpNode, sc_dec_graph_memop_node, 0, 0, PT_NONE, 0, (CUgraphNode *, phGraphNode),               \
      (CUgraph, hGraph), (const void *, dependencies), (size_t, numDependencies), (const void *, nodeParams))          \
    X(cuGraphKernelNodeSetParams, sc_dec_graph_forget, 0, FORGET_ALL_GRAPHS, PT_NONE, 10000, (CUgraphNode, hNode),     \
      (const void *, nodeParams))                                                                                      \
    X(cuGraphKernelNodeSetParams_v2, sc_dec_graph_forget, 0, FORGET_ALL_GRAPHS, PT_NONE, 12000, (CUgraphNode, hNode),  \
      (const void *, nodeParams))                                                                                      \
    X(cuGraphMemcpyNodeSetParams, sc_dec_graph_forget, 0, FORGET_ALL_GRAPHS, PT_NONE, 0, (CUgraphNode, hNode),         \
      (const void *, nodeParams))                                                                                      \
    X(cuGraphMemsetNodeSetParams, sc_dec_graph_forget, 0, FORGET_ALL_GRAPHS, PT_NONE, 0, (CUgraphNode, hNode),         \
      (const void *, nodeParams))                                                                                      \
    X(cuGraphBatchMemOpNodeSetParams, sc_dec_graph_forget, 0, FORGET_ALL_MEMOPS, PT_NONE, 0, (CUgraphNode, hNode),     \
      (const void *, nodeParams))                                                                                      \
    X(cuGraphNodeSetParams, sc_dec_graph_node_set_params, 0, 0, PT_NONE, 0, (CUgraphNode, hNode), (void *, nodeParams)) \
    X(cuGraphAddEventRecordNode, sc_dec_graph_event_node, 0, EVNODE_RECORD, PT_NONE, 0, (CUgraphNode *, phGraphNode),  \
      (CUgraph, hGraph), (const void *, dependencies), (size_t, numDependencies), (CUevent, event))                    \
    X(cuGraphAddEventWaitNode, sc_dec_graph_event_node, 0, EVNODE_WAIT, PT_NONE, 0, (CUgraphNode *, phGraphNode),      \
      (CUgraph, hGraph), (const void *, dependencies), (size_t, numDependencies), (CUevent, event))                    \
    X(cuGraphEventRecordNodeSetEvent, sc_dec_graph_node_set_event, 0, EVNODE_RECORD, PT_NONE, 0, (CUgraphNode, hNode), \
      (CUevent, event))                                                                                                \
    X(cuGraphEventWaitNodeSetEvent, sc_dec_graph_node_set_event, 0, EVNODE_WAIT, PT_NONE, 0, (CUgraphNode, hNode),     \
      (CUevent, event))                                                                                                \
    X(cuGraphExecEventRecordNodeSetEvent, sc_dec_graph_exec_set_event, 0, EVNODE_RECORD, PT_NONE, 0,                   \
      (CUgraphExec, hGraphExec), (CUgraphNode, hNode), (CUevent, event))                                               \
    X(cuGraphExecEventWaitNodeSetEvent, sc_dec_graph_exec_set_event, 0, EVNODE_WAIT, PT_NONE, 0,                       \
      (CUgraphExec, hGraphExec), (CUgraphNode, hNode), (CUevent, event))                                               \
    X(cuGraphDestroyNode, sc_dec_graph_forget, 0, FORGET_NODE, PT_NONE, 0, (CUgraphNode, hNode))                       \
    X(cuMemPoolExportToShareableHandle, sc_dec_pool_export, 0, 0, PT_NONE, 0, (void *, handle_out),                    \
      (CUmemoryPool, pool), (int, handleType), (sc_ull, flags))                                                        \
    X(cuMemPoolImportFromShareableHandle, sc_dec_pool_import, 0, 0, PT_NONE, 0, (CUmemoryPool *, pool_out),            \
      (void *, handle), (int, handleType), (sc_ull, flags))                                                            \
    X(cuMemPoolExportPointer, sc_dec_ptr_export, 0, 0, PT_NONE, 0, (sc_ipc_data *, shareData_out), (CUdeviceptr, ptr)) \
    X(cuMemPoolImportPointer, sc_dec_ptr_import, 0, 0, PT_NONE, 0, (CUdeviceptr *, ptr_out), (CUmemoryPool, pool),     \
      (sc_ipc_data *, shareData))                                                                                      \
    X(cuIpcGetEventHandle, sc_dec_ipc_event_get, 0, 0, PT_NONE, 0, (sc_ipc_data *, pHandle), (CUevent, event))         \
    X(cuIpcOpenEventHandle, sc_dec_ipc_event_open, 0, 0, PT_NONE, 0, (CUevent *, phEvent), (sc_ipc_data, handle))      \
    X(cuIpcGetMemHandle, sc_dec_ipc_mem_get, 0, 0, PT_NONE, 0, (sc_ipc_data *, pHandle), (CUdeviceptr, dptr))          \
    X(cuIpcOpenMemHandle, sc_dec_ipc_mem_open, 0, 0, PT_NONE, 4010, (CUdeviceptr *, pdptr), (sc_ipc_data, handle),     \
      (sc_uint, Flags))                                                                                                \
    X(cuIpcOpenMemHandle_v2, sc_dec_ipc_mem_open, 0, 0, PT_NONE, 11000, (CUdeviceptr *, pdptr),                        \
      (sc_ipc_data, handle), (sc_uint, Flags))                                                                         \
    X(cuIpcCloseMemHandle, sc_dec_ipc_mem_close, 0, 0, PT_NONE, 0, (CUdeviceptr, dptr))                                \
    X(cuModuleUnload, sc_dec_unload, 0, 0, PT_NONE, 0, (void *, hmod))                                                 \
    X(cuModuleGetGlobal_v2, sc_dec_module_global, 0, FAMILY_MODULE, PT_NONE, 3020, (CUdeviceptr *, dptr),             \
      (size_t *, bytes), (void *, hmod), (const char *, name))                                                         \
    X(cuLibraryGetGlobal, sc_dec_module_global, 0, FAMILY_MODULE, PT_NONE, 0, (CUdeviceptr *, dptr), (size_t *, bytes), \
      (void *, library), (const char *, name))                                                                         \
    X(cuLibraryGetManaged, sc_dec_module_global, 0, FAMILY_MODULE, PT_NONE, 0, (CUdeviceptr *, dptr),                 \
      (size_t *, bytes), (void *, library), (const char *, name))                                                      \
    X(cuLibraryUnload, sc_dec_unload, 0, 0, PT_NONE, 0, (void *, library))                                             \
    X(cuCtxDestroy, sc_dec_unload, 0, 0, PT_NONE, 2000, (CUcontext, ctx))                                              \
    X(cuCtxDestroy_v2, sc_dec_unload, 0, 0, PT_NONE, 4000, (CUcontext, ctx))                                           \
    X(cuDevicePrimaryCtxReset, sc_dec_unload, 0, 0, PT_NONE, 7000, (CUdevice, dev))                                    \
    X(cuDevicePrimaryCtxReset_v2, sc_dec_unload, 0, 0, PT_NONE, 11000, (CUdevice, dev))                                \
    X(cuDevicePrimaryCtxRelease, sc_dec_unload, 0, 0, PT_NONE, 7000, (CUdevice, dev))                                  \
    X(cuDevicePrimaryCtxRelease_v2, sc_dec_unload, 0, 0, PT_NONE, 11000, (CUdevice, dev))

#endif
