// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// host_func_completion_ok's hand-off with the main thread freeing too early:
// it waits only until the transfer thread has enqueued the copy and the
// host function, not until the host function ran, so the copy on the
// transfer stream may still read the buffer when the compute stream frees
// it. The host function's run is recorded after the free.
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common.cuh"

namespace {
struct Handoff {
    std::mutex mu;
    std::condition_variable cv;
    bool enqueued = false;
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
    sc::init("host_func_completion_racy");
    cudaStream_t compute = sc::make_stream(true);
    cudaStream_t transfer = sc::make_stream(true);
    cudaEvent_t ready = sc::make_event();
    int* host = nullptr;
    SC_CHECK(cudaMallocHost((void**)&host, sc::kBytes));

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, compute));
    sc_write_spin<<<sc::kBlocks, sc::kThreads, 0, compute>>>(p, sc::kN, sc::ms(50));
    SC_CHECK_LAUNCH();
    SC_CHECK(cudaEventRecord(ready, compute));

    Handoff h;
    std::thread transfer_thread([&] {
        SC_CHECK(cudaStreamWaitEvent(transfer, ready, 0));
        SC_CHECK(cudaMemcpyAsync(host, p, sc::kBytes, cudaMemcpyDeviceToHost, transfer));
        SC_CHECK(cudaLaunchHostFunc(transfer, copy_done, &h));
        std::lock_guard<std::mutex> lock(h.mu);
        h.enqueued = true;
        h.cv.notify_all();
    });
    {
        std::unique_lock<std::mutex> lock(h.mu);
        h.cv.wait(lock, [&] { return h.enqueued; });
    }
    // BUG: the copy was only enqueued; the kernel before it still runs.
    SC_CHECK(cudaFreeAsync(p, compute));
    {
        std::unique_lock<std::mutex> lock(h.mu);
        h.cv.wait(lock, [&] { return h.copied; });
    }
    transfer_thread.join();

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFreeHost(host));
    SC_CHECK(cudaEventDestroy(ready));
    SC_CHECK(cudaStreamDestroy(compute));
    SC_CHECK(cudaStreamDestroy(transfer));
    return sc::finish();
}
