// streamcheck-expect: clean
//
// Host functions enqueued with cudaLaunchHostFunc before the allocation and
// between the kernel and the event record on s1; the buffer is handed to s2
// and back with events. Host functions are ordinary stream work and must not
// disturb the ordering.
#include "common.cuh"

static void CUDART_CB count_host_func(void* user_data) {
    static_cast<std::atomic<int>*>(user_data)->fetch_add(1);
}

int main() {
    sc::init("host_func_ok");
    cudaStream_t s1 = sc::make_stream(true);
    cudaStream_t s2 = sc::make_stream(true);
    cudaEvent_t allocated = sc::make_event();
    cudaEvent_t used = sc::make_event();
    std::atomic<int> calls{0};

    SC_CHECK(cudaLaunchHostFunc(s1, count_host_func, &calls));
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, s1));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s1>>>(p, sc::kN, sc::ms(5));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaLaunchHostFunc(s1, count_host_func, &calls));
    SC_CHECK(cudaEventRecord(allocated, s1));

    SC_CHECK(cudaStreamWaitEvent(s2, allocated, 0));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, s2>>>(p, sc::kN, sc::ms(5));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaLaunchHostFunc(s2, count_host_func, &calls));
    SC_CHECK(cudaEventRecord(used, s2));

    SC_CHECK(cudaStreamWaitEvent(s1, used, 0));
    SC_CHECK(cudaFreeAsync(p, s1));
    SC_CHECK(cudaStreamSynchronize(s1));
    std::printf("STREAMCHECK_NOTE host functions ran %d time(s) (expect 3)\n", calls.load());

    SC_CHECK(cudaEventDestroy(allocated));
    SC_CHECK(cudaEventDestroy(used));
    SC_CHECK(cudaStreamDestroy(s1));
    SC_CHECK(cudaStreamDestroy(s2));
    return sc::finish();
}
