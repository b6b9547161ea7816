// streamcheck-expect: clean
//
// XLA's stream executor (TensorFlow's too) hands a buffer back this way: a
// transfer thread waits for the compute stream's event, copies the buffer
// to pinned host memory on a transfer stream and enqueues a host function;
// the host function, run by the driver once the copy completed, notifies the
// main thread through a condition variable, and only then does the main
// thread free the buffer on the compute stream. Correct: the free follows
// the copy's completion, which the host function's run shows (the shim
// records it as host_fn_run).
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common.cuh"

namespace {
struct Handoff {
    std::mutex mu;
    std::condition_variable cv;
    bool copied = false;
};

void CUDART_CB copy_done(void* user_data) {
    auto* h = static_cast<Handoff*>(user_data);
    std::lock_guard<std::mutex> lock(h->mu);
    h->copied = true;
    h->cv.notify_all();
}
}  // namespace

int main() {
    sc::init("host_func_completion_ok");
    cudaStream_t compute = sc::make_stream(true);
    cudaStream_t transfer = sc::make_stream(true);
    cudaEvent_t ready = sc::make_event();
    int* host = nullptr;
    SC_CHECK(cudaMallocHost((void**)&host, sc::kBytes));

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, compute));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, compute>>>(p, sc::kN, sc::ms(20));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecord(ready, compute));

    Handoff h;
    std::thread transfer_thread([&] {
        SC_CHECK(cudaStreamWaitEvent(transfer, ready, 0));
        SC_CHECK(cudaMemcpyAsync(host, p, sc::kBytes, cudaMemcpyDeviceToHost, transfer));
        SC_CHECK(cudaLaunchHostFunc(transfer, copy_done, &h));
    });
    {
        std::unique_lock<std::mutex> lock(h.mu);
        h.cv.wait(lock, [&] { return h.copied; });
    }
    // The copy completed: the buffer can go back to the pool.
    SC_CHECK(cudaFreeAsync(p, compute));
    transfer_thread.join();

    SC_CHECK(cudaDeviceSynchronize());
    std::printf("STREAMCHECK_NOTE first word copied back: %d\n", host[0]);
    SC_CHECK(cudaFreeHost(host));
    SC_CHECK(cudaEventDestroy(ready));
    SC_CHECK(cudaStreamDestroy(compute));
    SC_CHECK(cudaStreamDestroy(transfer));
    return sc::finish();
}
