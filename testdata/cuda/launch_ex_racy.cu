// streamcheck-expect: use-before-alloc
// streamcheck-expect-count: 1
//
// The buffer is allocated on s1 behind a 20 ms spin kernel and used on s2 by
// a cooperative launch through cudaLaunchKernelEx, without synchronization.
#include "common.cuh"

int main() {
    sc::init("launch_ex_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);

    sc_spin<<<1, 32, 0, s1>>>(sc::ms(20));
    SC_CHECK_LAUNCH();
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));

    cudaLaunchAttribute attrs[1] = {};
    attrs[0].id = cudaLaunchAttributeCooperative;
    attrs[0].val.cooperative = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(sc::kBlocks);
    config.blockDim = dim3(sc::kThreads);
    config.dynamicSmemBytes = 0;
    config.stream = s2;
    config.attrs = attrs;
    config.numAttrs = 1;
    const int n = sc::kN;
    const long long cycles = sc::ms(1);
    // BUG: s2 does not wait for the allocation on s1.
    SC_CHECK(cudaLaunchKernelEx(&config, sc_write_spin, p, n, cycles));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFreeAsync(p, s1));
    SC_CHECK(cudaStreamSynchronize(s1));

    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
