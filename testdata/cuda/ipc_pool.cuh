// ipc_pool.cuh: two processes that share a memory pool, as cuda-samples'
// streamOrderedAllocationIPC does. The process forks before either uses
// CUDA; the parent creates an exportable pool, sends its POSIX file
// descriptor to the child over a Unix socket (SCM_RIGHTS), allocates from
// it, writes the buffer on a stream, records an interprocess event and
// sends the event handle and the pointer's export data. The child imports
// the pool and the pointer, makes its stream wait on the opened event, runs
// importer(), which uses and frees the imported pointer, and says it is
// done; only then does the parent free the allocation. The two processes
// are ordered by the socket and the IPC event, which each trace sees only
// its own side of: streamcheck analyzes each process's trace on its own.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "common.cuh"

namespace sc_ipc {

struct Shared {
    cudaMemPoolPtrExportData data;
    cudaIpcEventHandle_t event;
};

// Sends n bytes and, if fd >= 0, the file descriptor fd with them.
inline bool send_msg(int sock, const void* buf, size_t n, int fd) {
    struct iovec iov = {const_cast<void*>(buf), n};
    struct msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(struct cmsghdr) char ctrl[CMSG_SPACE(sizeof(int))] = {};
    if (fd >= 0) {
        msg.msg_control = ctrl;
        msg.msg_controllen = sizeof ctrl;
        struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    return sendmsg(sock, &msg, 0) == static_cast<ssize_t>(n);
}

// Receives n bytes and, if fd is not null, a file descriptor sent with them.
inline bool recv_msg(int sock, void* buf, size_t n, int* fd) {
    struct iovec iov = {buf, n};
    struct msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(struct cmsghdr) char ctrl[CMSG_SPACE(sizeof(int))] = {};
    msg.msg_control = ctrl;
    msg.msg_controllen = sizeof ctrl;
    if (recvmsg(sock, &msg, MSG_WAITALL) != static_cast<ssize_t>(n)) {
        return false;
    }
    if (fd != nullptr) {
        struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
        if (c == nullptr || c->cmsg_type != SCM_RIGHTS) {
            return false;
        }
        std::memcpy(fd, CMSG_DATA(c), sizeof *fd);
    }
    return true;
}

inline void fail(const char* what) {
    std::printf("STREAMCHECK_CUDA_ERROR %s\n", what);
    ++sc::hard_errors();
}

inline int parent(const char* program, int sock, pid_t child) {
    sc::init(program);
    cudaStream_t s1 = sc::make_stream(true);
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool = nullptr;
    SC_CHECK(cudaMemPoolCreate(&pool, &props));
    int fd = -1;
    SC_CHECK(cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0));
    char ok = 1;
    if (!send_msg(sock, &ok, 1, fd)) {
        fail("send the pool's descriptor");
    }

    int* p = nullptr;
    SC_CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&p), sc::kBytes, pool, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, sc::kN, sc::ms(5));
    SC_CHECK_LAUNCH();
    cudaEvent_t written = nullptr;
    SC_CHECK(cudaEventCreateWithFlags(&written, cudaEventDisableTiming | cudaEventInterprocess));
    SC_CHECK(cudaEventRecord(written, s1));
    Shared sh = {};
    SC_CHECK(cudaIpcGetEventHandle(&sh.event, written));
    SC_CHECK(cudaMemPoolExportPointer(&sh.data, p));
    if (!send_msg(sock, &sh, sizeof sh, -1)) {
        fail("send the export data");
    }

    // The importer frees its mapping before the exporter frees the memory:
    // the child says when, over the socket.
    char done = 0;
    if (!recv_msg(sock, &done, 1, nullptr) || done != 1) {
        fail("the child's done");
    }
    SC_CHECK(cudaFreeAsync(p, s1));
    SC_CHECK(cudaStreamSynchronize(s1));
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fail("the child failed");
    }
    SC_CHECK(cudaEventDestroy(written));
    SC_CHECK(cudaMemPoolDestroy(pool));
    SC_CHECK(cudaStreamDestroy(s1));
    close(fd);
    return sc::finish();
}

// importer(q, s) uses and frees the imported pointer q; s already waits
// for the parent's write.
template <typename F>
int child(const char* program, int sock, F importer) {
    sc::init(program);
    cudaStream_t s = sc::make_stream(true);
    int fd = -1;
    char ok = 0;
    if (!recv_msg(sock, &ok, 1, &fd)) {
        fail("receive the pool's descriptor");
        return 1;
    }
    cudaMemPool_t pool = nullptr;
    SC_CHECK(cudaMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                                  cudaMemHandleTypePosixFileDescriptor, 0));
    cudaMemLocation here = {};
    here.type = cudaMemLocationTypeDevice;
    here.id = 0;
    cudaMemAccessFlags flags = cudaMemAccessFlagsProtNone;
    SC_CHECK(cudaMemPoolGetAccess(&flags, pool, &here));
    if (flags != cudaMemAccessFlagsProtReadWrite) {
        cudaMemAccessDesc desc = {};
        desc.location = here;
        desc.flags = cudaMemAccessFlagsProtReadWrite;
        SC_CHECK(cudaMemPoolSetAccess(pool, &desc, 1));
    }
    Shared sh = {};
    if (!recv_msg(sock, &sh, sizeof sh, nullptr)) {
        fail("receive the export data");
        return 1;
    }
    cudaEvent_t written = nullptr;
    SC_CHECK(cudaIpcOpenEventHandle(&written, sh.event));
    SC_CHECK(cudaStreamWaitEvent(s, written, 0)); // recorded in the parent: the trace cannot see it
    int* q = nullptr;
    SC_CHECK(cudaMemPoolImportPointer(reinterpret_cast<void**>(&q), pool, &sh.data));
    importer(q, s);
    char done = 1;
    if (!send_msg(sock, &done, 1, -1)) {
        fail("send done");
    }
    SC_CHECK(cudaEventDestroy(written));
    SC_CHECK(cudaStreamDestroy(s));
    close(fd);
    return sc::finish();
}

// Forks before CUDA is used (a forked child may not use its parent's CUDA
// state) and runs both sides.
template <typename F>
int run(const char* program, F importer) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        std::printf("STREAMCHECK_CUDA_ERROR socketpair\n");
        return 1;
    }
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        std::printf("STREAMCHECK_CUDA_ERROR fork\n");
        return 1;
    }
    if (pid == 0) {
        close(sv[0]);
        // exit, not _Exit: the recorder writes a trace's end record from an
        // exit handler, and a trace without one reads as truncated.
        std::exit(child(program, sv[1], importer));
    }
    close(sv[1]);
    return parent(program, sv[0], pid);
}

}  // namespace sc_ipc
