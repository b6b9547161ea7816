// streamcheck-expect: wait-unrecorded-event
// streamcheck-expect-count: 1
// streamcheck-expect: use-before-alloc
// streamcheck-expect-count: 1
//
// The program means to hand p from s1 to s2 with an event, but forgets the
// cudaEventRecord: the wait on a never-recorded event orders nothing (CUDA
// treats it as a no-op), so the kernel on s2 also uses p before its
// allocation on s1.
#include "common.cuh"

int main() {
    sc::init("wait_unrecorded_event_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t allocated = sc::make_event();

    sc_spin<<<1, 32, 0, s1>>>(sc::ms(20));
    SC_CHECK_LAUNCH();
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    // BUG: missing cudaEventRecord(allocated, s1).

    SC_CHECK(cudaStreamWaitEvent(s2, allocated, 0));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(p, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFreeAsync(p, s1));
    SC_CHECK(cudaStreamSynchronize(s1));

    SC_CHECK(cudaEventDestroy(allocated));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
