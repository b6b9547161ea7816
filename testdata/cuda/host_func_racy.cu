// streamcheck-expect: use-before-alloc
// streamcheck-expect-count: 1
//
// A host function enqueued with cudaLaunchHostFunc holds s1 for 20 ms; the
// allocation on s1 comes after it, and a kernel on s2 uses the buffer without
// waiting for s1.
#include "common.cuh"

static void CUDART_CB slow_host_func(void* user_data) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    static_cast<std::atomic<int>*>(user_data)->fetch_add(1);
}

int main() {
    sc::init("host_func_racy");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    std::atomic<int> calls{0};

    SC_CHECK(cudaLaunchHostFunc(s1, slow_host_func, &calls));
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();

    // BUG: s2 does not wait for s1.
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(p, sc::kN, sc::ms(1));
    SC_CHECK_LAUNCH();

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFreeAsync(p, s1));
    SC_CHECK(cudaStreamSynchronize(s1));
    std::printf("STREAMCHECK_NOTE host function ran %d time(s)\n", calls.load());

    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
