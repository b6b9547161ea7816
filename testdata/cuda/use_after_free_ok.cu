// streamcheck-expect: clean
//
// Allocate/use/free p, then allocate q of the same size on the same stream
// (the pool almost always hands back p's address) and use q on another stream
// with proper events. Uses of q must be attributed to q, not to the freed p.
#include "common.cuh"

int main() {
    sc::init("use_after_free_ok");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t allocated = sc::make_event();
    cudaEvent_t used = sc::make_event();

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, sc::kN, sc::ms(2));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaFreeAsync(p, s1));

    int* q = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&q, sc::kBytes, s1));
    sc::note_reuse(p, q);
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(q, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecord(allocated, s1));

    SC_CHECK(cudaStreamWaitEvent(s2, allocated, 0));
    sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(q, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecord(used, s2));
    SC_CHECK(cudaStreamWaitEvent(s1, used, 0));
    SC_CHECK(cudaFreeAsync(q, s1));
    SC_CHECK(cudaStreamSynchronize(s1));

    SC_CHECK(cudaEventDestroy(allocated));
    SC_CHECK(cudaEventDestroy(used));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
