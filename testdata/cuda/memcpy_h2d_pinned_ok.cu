// streamcheck-expect: clean
//
// A synchronous cudaMemcpy from PINNED host memory (cudaMallocHost) to the
// device is synchronous with respect to the host, so the destination can be
// freed right after it returns.
#include "common.cuh"

int main() {
    sc::init("memcpy_h2d_pinned_ok");
    cudaStream_t s1 = sc::make_stream(true);
    const size_t bytes = sc::kBytes * 16;  // 4 MiB
    int* host = nullptr;
    SC_CHECK(cudaMallocHost((void**)&host, bytes));
    for (size_t i = 0; i < bytes / sizeof(int); ++i) {
        host[i] = 3;
    }

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, bytes, s1));
    SC_CHECK(cudaStreamSynchronize(s1));

    SC_CHECK(cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice));
    SC_CHECK(cudaFreeAsync(p, s1));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaFreeHost(host));
    SC_CHECK(cudaStreamDestroy(s1));
    return sc::finish();
}
