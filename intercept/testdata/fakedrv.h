/*
 * fakedrv.h: the driver entry points the fake libcuda (fakecupti.c) exports
 * under their real names, with cuda.h's signatures, for the tests of the
 * interposition backend. Written apart from the shim's own table
 * (intercept/drvcalls.h) so that a signature the shim gets wrong shows as
 * arguments the fake did not get.
 *
 * FAKE_DRIVER(F, F0): F(name, base, version, pt, (type, param)...), F0 for a
 * function without parameters. cuGetProcAddress(base, version, flags) hands
 * out the row of that base with the highest version not above the one
 * asked for, its per-thread variant (pt 1: _ptsz or _ptds) when flags ask
 * for the per-thread default stream.
 *
 * The host-function entry points are fakecupti.c's (a queue the fake
 * driver runs), not rows here.
 */
#ifndef FAKEDRV_H
#define FAKEDRV_H

typedef unsigned int u32;
typedef unsigned long long u64;
typedef void *ptr;
typedef const void *cptr;

/* A function and its per-thread-default-stream variant. */
#define FAKE_STREAM_FNS(F, name, base, ver, ...) \
    F(name, base, ver, 0, __VA_ARGS__)           \
    F(name##_ptsz, base, ver, 1, __VA_ARGS__)

#define FAKE_DRIVER(F, F0)                                                                                        \
    F(cuStreamCreate, cuStreamCreate, 2000, 0, (ptr, phStream), (u32, Flags))                                      \
    F(cuStreamCreateWithPriority, cuStreamCreateWithPriority, 5050, 0, (ptr, phStream), (u32, flags), (int, priority)) \
    F(cuStreamDestroy_v2, cuStreamDestroy, 4000, 0, (CUstream, hStream))                                           \
    F(cuEventCreate, cuEventCreate, 2000, 0, (ptr, phEvent), (u32, Flags))                                         \
    FAKE_STREAM_FNS(F, cuEventRecord, cuEventRecord, 2000, (CUevent, hEvent), (CUstream, hStream))                                \
    FAKE_STREAM_FNS(F, cuEventRecordWithFlags, cuEventRecordWithFlags, 11010, (CUevent, hEvent), (CUstream, hStream), (u32, flags))        \
    F(cuEventDestroy_v2, cuEventDestroy, 4000, 0, (CUevent, hEvent))                                               \
    FAKE_STREAM_FNS(F, cuStreamWaitEvent, cuStreamWaitEvent, 3020, (CUstream, hStream), (CUevent, hEvent), (u32, Flags))              \
    FAKE_STREAM_FNS(F, cuStreamSynchronize, cuStreamSynchronize, 2000, (CUstream, hStream))                                             \
    F(cuEventSynchronize, cuEventSynchronize, 2000, 0, (CUevent, hEvent))                                          \
    F0(cuCtxSynchronize, cuCtxSynchronize, 2000, 0)                                                                \
    FAKE_STREAM_FNS(F, cuStreamQuery, cuStreamQuery, 2000, (CUstream, hStream))                                                   \
    F(cuEventQuery, cuEventQuery, 2000, 0, (CUevent, hEvent))                                                      \
    FAKE_STREAM_FNS(F, cuMemAllocAsync, cuMemAllocAsync, 11020, (ptr, dptr), (size_t, bytesize), (CUstream, hStream))               \
    FAKE_STREAM_FNS(F, cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync, 11020, (ptr, dptr), (size_t, bytesize), (CUmemoryPool, pool),      \
                    (CUstream, hStream))                                                                           \
    F(cuMemAlloc_v2, cuMemAlloc, 3020, 0, (ptr, dptr), (size_t, bytesize))                                         \
    F(cuMemAllocManaged, cuMemAllocManaged, 6000, 0, (ptr, dptr), (size_t, bytesize), (u32, flags))                \
    F(cuMemAllocPitch_v2, cuMemAllocPitch, 3020, 0, (ptr, dptr), (ptr, pPitch), (size_t, WidthInBytes),            \
      (size_t, Height), (u32, ElementSizeBytes))                                                                   \
    F(cuMemAllocHost_v2, cuMemAllocHost, 3020, 0, (ptr, pp), (size_t, bytesize))                                   \
    F(cuMemHostAlloc, cuMemHostAlloc, 2020, 0, (ptr, pp), (size_t, bytesize), (u32, Flags))                        \
    F(cuMemHostRegister_v2, cuMemHostRegister, 6050, 0, (ptr, p), (size_t, bytesize), (u32, Flags))                \
    FAKE_STREAM_FNS(F, cuMemFreeAsync, cuMemFreeAsync, 11020, (CUdeviceptr, dptr), (CUstream, hStream))                            \
    F(cuMemFree_v2, cuMemFree, 3020, 0, (CUdeviceptr, dptr))                                                       \
    F(cuMemFreeHost, cuMemFreeHost, 2000, 0, (ptr, p))                                                             \
    F(cuMemHostUnregister, cuMemHostUnregister, 4000, 0, (ptr, p))                                                 \
    F(cuMemMap, cuMemMap, 10020, 0, (CUdeviceptr, ptr), (size_t, size), (size_t, offset), (u64, handle),           \
      (u64, flags))                                                                                                \
    F(cuMemUnmap, cuMemUnmap, 10020, 0, (CUdeviceptr, ptr), (size_t, size))                                        \
    F(cuMemPoolSetAttribute, cuMemPoolSetAttribute, 11020, 0, (CUmemoryPool, pool), (int, attr), (ptr, value))     \
    F(cuDeviceSetMemPool, cuDeviceSetMemPool, 11020, 0, (CUdevice, dev), (CUmemoryPool, pool))                     \
    F(cuMemSetMemPool, cuMemSetMemPool, 13000, 0, (ptr, location), (int, type), (CUmemoryPool, pool))              \
    F(cuMemPoolTrimTo, cuMemPoolTrimTo, 11020, 0, (CUmemoryPool, pool), (size_t, minBytesToKeep))                  \
    FAKE_STREAM_FNS(F, cuLaunchKernel, cuLaunchKernel, 4000, (CUfunction, f), (u32, gridDimX), (u32, gridDimY), (u32, gridDimZ),   \
                    (u32, blockDimX), (u32, blockDimY), (u32, blockDimZ), (u32, sharedMemBytes), (CUstream, hStream), \
                    (ptr, kernelParams), (ptr, extra))                                                             \
    FAKE_STREAM_FNS(F, cuLaunchCooperativeKernel, cuLaunchCooperativeKernel, 9000, (CUfunction, f), (u32, gridDimX), (u32, gridDimY),         \
                    (u32, gridDimZ), (u32, blockDimX), (u32, blockDimY), (u32, blockDimZ), (u32, sharedMemBytes),  \
                    (CUstream, hStream), (ptr, kernelParams))                                                      \
    FAKE_STREAM_FNS(F, cuLaunchKernelEx, cuLaunchKernelEx, 11060, (cptr, config), (CUfunction, f), (ptr, kernelParams), (ptr, extra)) \
    F(cuMemcpy, cuMemcpy, 4000, 0, (CUdeviceptr, dst), (CUdeviceptr, src), (size_t, ByteCount))                    \
    F(cuMemcpy_ptds, cuMemcpy, 4000, 1, (CUdeviceptr, dst), (CUdeviceptr, src), (size_t, ByteCount))               \
    F(cuMemcpyHtoD_v2, cuMemcpyHtoD, 3020, 0, (CUdeviceptr, dstDevice), (cptr, srcHost), (size_t, ByteCount))      \
    F(cuMemcpyHtoD_v2_ptds, cuMemcpyHtoD, 3020, 1, (CUdeviceptr, dstDevice), (cptr, srcHost), (size_t, ByteCount)) \
    FAKE_STREAM_FNS(F, cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync, 3020, (ptr, dstHost), (CUdeviceptr, srcDevice), (size_t, ByteCount),  \
                    (CUstream, hStream))                                                                           \
    F(cuMemcpyPeer, cuMemcpyPeer, 4000, 0, (CUdeviceptr, dstDevice), (CUcontext, dstContext),                      \
      (CUdeviceptr, srcDevice), (CUcontext, srcContext), (size_t, ByteCount))                                      \
    FAKE_STREAM_FNS(F, cuMemcpyPeerAsync, cuMemcpyPeerAsync, 4000, (CUdeviceptr, dstDevice), (CUcontext, dstContext),                 \
                    (CUdeviceptr, srcDevice), (CUcontext, srcContext), (size_t, ByteCount), (CUstream, hStream))   \
    FAKE_STREAM_FNS(F, cuMemcpy2DAsync_v2, cuMemcpy2DAsync, 3020, (cptr, pCopy), (CUstream, hStream))                               \
    FAKE_STREAM_FNS(F, cuMemcpy3DAsync_v2, cuMemcpy3DAsync, 3020, (cptr, pCopy), (CUstream, hStream))                               \
    F(cuStreamWriteValue32_v2, cuStreamWriteValue32, 11070, 0, (CUstream, stream), (CUdeviceptr, addr),            \
      (uint32_t, value), (u32, flags))                                                                             \
    F(cuStreamWaitValue64_v2_ptsz, cuStreamWaitValue64, 11070, 1, (CUstream, stream), (CUdeviceptr, addr),         \
      (uint64_t, value), (u32, flags))                                                                             \
    FAKE_STREAM_FNS(F, cuStreamBatchMemOp_v2, cuStreamBatchMemOp, 11070, (CUstream, stream), (u32, count), (ptr, paramArray),          \
                    (u32, flags))                                                                                  \
    F(cuMemcpyBatchAsync, cuMemcpyBatchAsync, 12080, 0, (ptr, dsts), (ptr, srcs), (ptr, sizes), (size_t, count),   \
      (ptr, attrs), (ptr, attrsIdxs), (size_t, numAttrs), (ptr, failIdx), (CUstream, hStream))                     \
    F(cuMemcpyBatchAsync_v2, cuMemcpyBatchAsync, 13000, 0, (ptr, dsts), (ptr, srcs), (ptr, sizes), (size_t, count), \
      (ptr, attrs), (ptr, attrsIdxs), (size_t, numAttrs), (CUstream, hStream))                                     \
    F(cuMemcpyWithAttributesAsync, cuMemcpyWithAttributesAsync, 13010, 0, (CUdeviceptr, dst), (CUdeviceptr, src),  \
      (size_t, size), (ptr, attr), (CUstream, hStream))                                                            \
    F(cuMemcpy3DBatchAsync, cuMemcpy3DBatchAsync, 12080, 0, (size_t, numOps), (ptr, opList), (ptr, failIdx),       \
      (u64, flags), (CUstream, hStream))                                                                           \
    F(cuMemcpy3DBatchAsync_v2, cuMemcpy3DBatchAsync, 13000, 0, (size_t, numOps), (ptr, opList), (u64, flags),      \
      (CUstream, hStream))                                                                                         \
    F(cuMemcpy3DWithAttributesAsync, cuMemcpy3DWithAttributesAsync, 13010, 0, (ptr, op), (u64, flags),             \
      (CUstream, hStream))                                                                                         \
    F(cuMemsetD8_v2, cuMemsetD8, 3020, 0, (CUdeviceptr, dstDevice), (unsigned char, uc), (size_t, N))              \
    FAKE_STREAM_FNS(F, cuMemsetD32Async, cuMemsetD32Async, 3020, (CUdeviceptr, dstDevice), (u32, ui), (size_t, N), (CUstream, hStream)) \
    FAKE_STREAM_FNS(F, cuMemsetD2D32Async, cuMemsetD2D32Async, 3020, (CUdeviceptr, dstDevice), (size_t, dstPitch), (u32, ui),          \
                    (size_t, Width), (size_t, Height), (CUstream, hStream))                                        \
    FAKE_STREAM_FNS(F, cuMemPrefetchAsync, cuMemPrefetchAsync, 8000, (CUdeviceptr, devPtr), (size_t, count),        \
                    (CUdevice, dstDevice), (CUstream, hStream))                                                    \
    FAKE_STREAM_FNS(F, cuMemPrefetchAsync_v2, cuMemPrefetchAsync, 12020, (CUdeviceptr, devPtr), (size_t, count),   \
                    (CUmemLocation, location), (u32, flags), (CUstream, hStream))                                  \
    FAKE_STREAM_FNS(F, cuStreamBeginCapture_v2, cuStreamBeginCapture, 10010, (CUstream, hStream), (int, mode))                           \
    FAKE_STREAM_FNS(F, cuStreamBeginCaptureToGraph, cuStreamBeginCaptureToGraph, 12030, (CUstream, hStream), (CUgraph, hGraph),                 \
                    (cptr, dependencies), (cptr, dependencyData), (size_t, numDependencies), (int, mode))          \
    FAKE_STREAM_FNS(F, cuStreamEndCapture, cuStreamEndCapture, 10000, (CUstream, hStream), (ptr, phGraph))                             \
    FAKE_STREAM_FNS(F, cuGraphLaunch, cuGraphLaunch, 10000, (CUgraphExec, hGraphExec), (CUstream, hStream))                       \
    F(cuGraphInstantiateWithFlags, cuGraphInstantiateWithFlags, 11040, 0, (ptr, phGraphExec), (CUgraph, hGraph),   \
      (u64, flags))                                                                                                \
    F(cuGraphExecUpdate, cuGraphExecUpdate, 10020, 0, (CUgraphExec, hGraphExec), (CUgraph, hGraph),                \
      (ptr, hErrorNode_out), (ptr, updateResult_out))                                                              \
    F(cuGraphExecUpdate_v2, cuGraphExecUpdate, 12000, 0, (CUgraphExec, hGraphExec), (CUgraph, hGraph),             \
      (ptr, resultInfo))                                                                                           \
    F(cuMemPoolCreate, cuMemPoolCreate, 11020, 0, (ptr, pool), (cptr, poolProps))                                  \
    F(cuGraphAddMemAllocNode, cuGraphAddMemAllocNode, 11040, 0, (ptr, phGraphNode), (CUgraph, hGraph),             \
      (cptr, dependencies), (size_t, numDependencies), (ptr, nodeParams))                                          \
    F(cuGraphAddNode, cuGraphAddNode, 12020, 0, (ptr, phGraphNode), (CUgraph, hGraph), (cptr, dependencies),       \
      (size_t, numDependencies), (ptr, nodeParams))                                                                \
    F(cuGraphAddNode_v2, cuGraphAddNode, 12030, 0, (ptr, phGraphNode), (CUgraph, hGraph), (cptr, dependencies),    \
      (cptr, dependencyData), (size_t, numDependencies), (ptr, nodeParams))                                        \
    F(cuGraphCreate, cuGraphCreate, 10000, 0, (ptr, phGraph), (u32, flags))                                        \
    F(cuGraphClone, cuGraphClone, 10000, 0, (ptr, phGraphClone), (CUgraph, originalGraph))                         \
    F(cuGraphDestroy, cuGraphDestroy, 10000, 0, (CUgraph, hGraph))                                                 \
    F(cuGraphExecDestroy, cuGraphExecDestroy, 10000, 0, (CUgraphExec, hGraphExec))                                 \
    F(cuGraphExecKernelNodeSetParams, cuGraphExecKernelNodeSetParams, 10010, 0, (CUgraphExec, hGraphExec),         \
      (CUgraphNode, hNode), (cptr, nodeParams))                                                                    \
    F(cuGraphExecKernelNodeSetParams_v2, cuGraphExecKernelNodeSetParams, 12000, 0, (CUgraphExec, hGraphExec),      \
      (CUgraphNode, hNode), (cptr, nodeParams))                                                                    \
    F(cuGraphExecChildGraphNodeSetParams, cuGraphExecChildGraphNodeSetParams, 11010, 0, (CUgraphExec, hGraphExec), \
      (CUgraphNode, hNode), (CUgraph, childGraph))                                                                 \
    F(cuGraphExecNodeSetParams, cuGraphExecNodeSetParams, 12020, 0, (CUgraphExec, hGraphExec), (CUgraphNode, hNode), \
      (ptr, nodeParams))                                                                                           \
    F(cuGraphNodeSetEnabled, cuGraphNodeSetEnabled, 11060, 0, (CUgraphExec, hGraphExec), (CUgraphNode, hNode),     \
      (u32, isEnabled))                                                                                            \
    F(cuGraphAddKernelNode, cuGraphAddKernelNode, 10000, 0, (ptr, phGraphNode), (CUgraph, hGraph),                 \
      (cptr, dependencies), (size_t, numDependencies), (cptr, nodeParams))                                         \
    F(cuGraphAddKernelNode_v2, cuGraphAddKernelNode, 12000, 0, (ptr, phGraphNode), (CUgraph, hGraph),              \
      (cptr, dependencies), (size_t, numDependencies), (cptr, nodeParams))                                         \
    F(cuGraphAddMemcpyNode, cuGraphAddMemcpyNode, 10000, 0, (ptr, phGraphNode), (CUgraph, hGraph),                 \
      (cptr, dependencies), (size_t, numDependencies), (cptr, copyParams), (CUcontext, ctx))                       \
    F(cuGraphAddMemsetNode, cuGraphAddMemsetNode, 10000, 0, (ptr, phGraphNode), (CUgraph, hGraph),                 \
      (cptr, dependencies), (size_t, numDependencies), (cptr, memsetParams), (CUcontext, ctx))                     \
    F(cuGraphAddChildGraphNode, cuGraphAddChildGraphNode, 10000, 0, (ptr, phGraphNode), (CUgraph, hGraph),         \
      (cptr, dependencies), (size_t, numDependencies), (CUgraph, childGraph))                                      \
    F(cuGraphAddBatchMemOpNode, cuGraphAddBatchMemOpNode, 11070, 0, (ptr, phGraphNode), (CUgraph, hGraph),         \
      (cptr, dependencies), (size_t, numDependencies), (cptr, nodeParams))                                         \
    F(cuGraphKernelNodeSetParams, cuGraphKernelNodeSetParams, 10000, 0, (CUgraphNode, hNode), (cptr, nodeParams))  \
    F(cuGraphKernelNodeSetParams_v2, cuGraphKernelNodeSetParams, 12000, 0, (CUgraphNode, hNode), (cptr, nodeParams)) \
    F(cuGraphBatchMemOpNodeSetParams, cuGraphBatchMemOpNodeSetParams, 11070, 0, (CUgraphNode, hNode),              \
      (cptr, nodeParams))                                                                                          \
    F(cuGraphNodeSetParams, cuGraphNodeSetParams, 12020, 0, (CUgraphNode, hNode), (ptr, nodeParams))               \
    F(cuGraphAddEventRecordNode, cuGraphAddEventRecordNode, 11010, 0, (ptr, phGraphNode), (CUgraph, hGraph),       \
      (cptr, dependencies), (size_t, numDependencies), (CUevent, event))                                           \
    F(cuGraphAddEventWaitNode, cuGraphAddEventWaitNode, 11010, 0, (ptr, phGraphNode), (CUgraph, hGraph),           \
      (cptr, dependencies), (size_t, numDependencies), (CUevent, event))                                           \
    F(cuGraphEventRecordNodeSetEvent, cuGraphEventRecordNodeSetEvent, 11010, 0, (CUgraphNode, hNode),              \
      (CUevent, event))                                                                                            \
    F(cuGraphEventWaitNodeSetEvent, cuGraphEventWaitNodeSetEvent, 11010, 0, (CUgraphNode, hNode), (CUevent, event)) \
    F(cuGraphExecEventRecordNodeSetEvent, cuGraphExecEventRecordNodeSetEvent, 11010, 0, (CUgraphExec, hGraphExec), \
      (CUgraphNode, hNode), (CUevent, event))                                                                      \
    F(cuGraphExecEventWaitNodeSetEvent, cuGraphExecEventWaitNodeSetEvent, 11010, 0, (CUgraphExec, hGraphExec),     \
      (CUgraphNode, hNode), (CUevent, event))                                                                      \
    F(cuGraphDestroyNode, cuGraphDestroyNode, 10000, 0, (CUgraphNode, hNode))                                      \
    F(cuMemPoolExportToShareableHandle, cuMemPoolExportToShareableHandle, 11020, 0, (ptr, handle_out),             \
      (CUmemoryPool, pool), (int, handleType), (u64, flags))                                                       \
    F(cuMemPoolImportFromShareableHandle, cuMemPoolImportFromShareableHandle, 11020, 0, (ptr, pool_out),           \
      (ptr, handle), (int, handleType), (u64, flags))                                                              \
    F(cuMemPoolExportPointer, cuMemPoolExportPointer, 11020, 0, (ptr, shareData_out), (CUdeviceptr, ptr))          \
    F(cuMemPoolImportPointer, cuMemPoolImportPointer, 11020, 0, (ptr, ptr_out), (CUmemoryPool, pool),              \
      (ptr, shareData))                                                                                            \
    F(cuIpcGetEventHandle, cuIpcGetEventHandle, 4010, 0, (ptr, pHandle), (CUevent, event))                         \
    F(cuIpcOpenEventHandle, cuIpcOpenEventHandle, 4010, 0, (ptr, phEvent), (CUipcEventHandle, handle))             \
    F(cuIpcGetMemHandle, cuIpcGetMemHandle, 4010, 0, (ptr, pHandle), (CUdeviceptr, dptr))                          \
    F(cuIpcOpenMemHandle_v2, cuIpcOpenMemHandle, 11000, 0, (ptr, pdptr), (CUipcMemHandle, handle), (u32, Flags))   \
    F(cuIpcCloseMemHandle, cuIpcCloseMemHandle, 4010, 0, (CUdeviceptr, dptr))                                      \
    F(cuModuleUnload, cuModuleUnload, 2000, 0, (ptr, hmod))                                                        \
    F(cuModuleGetGlobal_v2, cuModuleGetGlobal, 3020, 0, (ptr, dptr), (ptr, bytes), (ptr, hmod), (cptr, name))      \
    F(cuLibraryGetGlobal, cuLibraryGetGlobal, 12000, 0, (ptr, dptr), (ptr, bytes), (ptr, library), (cptr, name))

#endif
