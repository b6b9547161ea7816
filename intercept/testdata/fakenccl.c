/*
 * fakenccl.c: a fake libnccl.so.2 for the shim's tests (nccl_test.go).
 * Each communication call returns what it was told to through its
 * arguments: a count of FAKE_NCCL_BAD elements is ncclInvalidArgument;
 * the others succeed, leaving errno at FAKE_NCCL_ERRNO so that a test sees
 * whether a wrapper keeps what the real call left. ncclMemAlloc and
 * ncclMemFree make the driver calls NCCL makes (cuMemMap, cuMemUnmap)
 * through the fake CUPTI, as the real ones reach CUPTI's callbacks.
 */
#include <errno.h>
#include <stdlib.h>

#include "fakecuda.h"
#include "fakenccl.h"

#define FAKE_NCCL_BAD ((size_t)-1)
#define FAKE_NCCL_ERRNO 4242

struct ncclComm {
    int nranks, rank, dev;
};

ncclComm_t fake_comm(int nranks, int rank, int dev) {
    ncclComm_t c = calloc(1, sizeof *c);
    c->nranks = nranks, c->rank = rank, c->dev = dev;
    return c;
}

static ncclResult_t done(size_t count) {
    errno = FAKE_NCCL_ERRNO;
    return count == FAKE_NCCL_BAD ? 4 /* ncclInvalidArgument */ : 0;
}

ncclResult_t ncclGetVersion(int *version) {
    *version = 22703;
    return 0;
}
ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) {
    *count = comm->nranks;
    return 0;
}
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank) {
    *rank = comm->rank;
    return 0;
}
ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *device) {
    *device = comm->dev;
    return 0;
}
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
    free(comm);
    return 0;
}
ncclResult_t ncclAllReduce(const void *s, void *r, size_t count, ncclDataType_t t, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream) {
    return done(count);
}
ncclResult_t ncclReduce(const void *s, void *r, size_t count, ncclDataType_t t, ncclRedOp_t op, int root,
                        ncclComm_t comm, cudaStream_t stream) {
    return done(count);
}
ncclResult_t ncclBcast(void *b, size_t count, ncclDataType_t t, int root, ncclComm_t comm, cudaStream_t stream) {
    return done(count);
}
ncclResult_t ncclBroadcast(const void *s, void *r, size_t count, ncclDataType_t t, int root, ncclComm_t comm,
                           cudaStream_t stream) {
    return done(count);
}
ncclResult_t ncclAllGather(const void *s, void *r, size_t count, ncclDataType_t t, ncclComm_t comm,
                           cudaStream_t stream) {
    return done(count);
}
ncclResult_t ncclReduceScatter(const void *s, void *r, size_t count, ncclDataType_t t, ncclRedOp_t op,
                               ncclComm_t comm, cudaStream_t stream) {
    return done(count);
}
ncclResult_t ncclAlltoAll(const void *s, void *r, size_t count, ncclDataType_t t, ncclComm_t comm,
                          cudaStream_t stream) {
    return done(count);
}
ncclResult_t ncclGather(const void *s, void *r, size_t count, ncclDataType_t t, int root, ncclComm_t comm,
                        cudaStream_t stream) {
    return done(count);
}
ncclResult_t ncclScatter(const void *s, void *r, size_t count, ncclDataType_t t, int root, ncclComm_t comm,
                         cudaStream_t stream) {
    return done(count);
}
ncclResult_t ncclSend(const void *s, size_t count, ncclDataType_t t, int peer, ncclComm_t comm, cudaStream_t stream) {
    return done(count);
}
ncclResult_t ncclRecv(void *r, size_t count, ncclDataType_t t, int peer, ncclComm_t comm, cudaStream_t stream) {
    return done(count);
}

static int depth;
ncclResult_t ncclGroupStart(void) {
    depth++;
    return 0;
}
ncclResult_t ncclGroupEnd(void) {
    if (depth == 0) return 5; /* ncclInvalidUsage */
    depth--;
    errno = FAKE_NCCL_ERRNO;
    return 0;
}

/* A 2 MiB granule mapped at a fresh address, as ncclMemAlloc's cuMem path does. */
ncclResult_t ncclMemAlloc(void **ptr, size_t size) {
    size_t n = (size + (2u << 20) - 1) / (2u << 20) * (2u << 20);
    CUdeviceptr va = fk_device_alloc(n);
    cuMemMap_params m = {va, n, 0, 0x77, 0};
    fk_driver_enter("cuMemMap", &m, NULL);
    fk_driver_exit("cuMemMap", &m, 0, NULL);
    *ptr = (void *)(uintptr_t)va;
    return 0;
}
ncclResult_t ncclMemFree(void *ptr) {
    cuMemUnmap_params u = {(CUdeviceptr)(uintptr_t)ptr, 2u << 20};
    fk_driver_enter("cuMemUnmap", &u, NULL);
    fk_driver_exit("cuMemUnmap", &u, 0, NULL);
    return 0;
}
