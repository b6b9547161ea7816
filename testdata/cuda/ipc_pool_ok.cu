// streamcheck-expect: clean
//
// Two processes share a pool (ipc_pool.cuh): the child imports the
// parent's allocation, reads it on its stream after waiting on the
// parent's IPC event, and frees it with cudaFreeAsync on the same stream
// before telling the parent, which only then frees the allocation. The
// child's free of the imported pointer is no invalid free, its wait on the
// opened event no wait for an event never recorded, and nothing the two
// processes order over the socket is a finding.
#include "ipc_pool.cuh"

int main() {
    return sc_ipc::run("ipc_pool_ok", [](int* q, cudaStream_t s) {
        sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s>>>(q, sc::kN, sc::ms(2));
        SC_CHECK_LAUNCH();
        SC_CHECK(cudaFreeAsync(q, s));
        SC_CHECK(cudaStreamSynchronize(s));
    });
}
