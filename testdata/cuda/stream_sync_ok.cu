// streamcheck-expect: clean
//
// cudaStreamSynchronize(s1) orders the host after the allocation before the
// kernel on s2 is launched, and cudaStreamSynchronize(s2) orders the host
// after that kernel before the free on s1.
#include "common.cuh"

int main() {
    sc::init("stream_sync_ok");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);

    sc_spin<<<1, 32, 0, s1>>>(sc::ms(20));
    SC_CHECK_LAUNCH();
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));

    SC_CHECK(cudaStreamSynchronize(s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(p, sc::kN, sc::ms(5));
    SC_CHECK_LAUNCH();

    SC_CHECK(cudaStreamSynchronize(s2));
    SC_CHECK(cudaFreeAsync(p, s1));
    SC_CHECK(cudaStreamSynchronize(s1));

    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
