// streamcheck-expect: clean
//
// The buffer is handed from s1 to s2 with an event and used on s2 through
// every launch API: cudaLaunchKernelEx with the cooperative attribute,
// cudaLaunchKernel, cudaLaunchCooperativeKernel and <<<...>>>; then handed back
// and freed on s1.
#include "common.cuh"

int main() {
    sc::init("launch_ex_ok");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t allocated = sc::make_event();
    cudaEvent_t used = sc::make_event();

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    SC_CHECK(cudaEventRecord(allocated, s1));
    SC_CHECK(cudaStreamWaitEvent(s2, allocated, 0));

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
    const long long cycles = sc::ms(2);
    SC_CHECK(cudaLaunchKernelEx(&config, sc_write_spin, p, n, cycles));

    int n_arg = sc::kN;
    long long cycles_arg = sc::ms(2);
    void* args[] = {&p, &n_arg, &cycles_arg};
    SC_CHECK(cudaLaunchKernel((const void*)sc_write_spin, dim3(sc::kBlocks), dim3(sc::kThreads), args, 0, s2));
    SC_CHECK(cudaLaunchCooperativeKernel((const void*)sc_write_spin, dim3(sc::kBlocks), dim3(sc::kThreads), args,
                                         0, s2));
    sc_read_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(p, sc::kN, sc::ms(2));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecord(used, s2));

    SC_CHECK(cudaStreamWaitEvent(s1, used, 0));
    SC_CHECK(cudaFreeAsync(p, s1));
    SC_CHECK(cudaStreamSynchronize(s1));

    SC_CHECK(cudaEventDestroy(allocated));
    SC_CHECK(cudaEventDestroy(used));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
