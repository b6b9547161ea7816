// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// A synchronous cudaMemcpy from PAGEABLE host memory to the device may return
// once the data is staged, before the DMA into the destination completes, so
// it does not order the host after the copy. The destination is freed right
// after the copy on a non-blocking stream. (The allocation was ordered before
// the host by a stream synchronize.)
#include "common.cuh"

#include <vector>

int main() {
    sc::init("memcpy_h2d_pageable_racy");
    cudaStream_t s1 = sc::make_stream(true);
    std::vector<int> host(sc::kN * 16, 3);  // pageable, 4 MiB
    const size_t bytes = host.size() * sizeof(int);

    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, bytes, s1));
    SC_CHECK(cudaStreamSynchronize(s1));

    SC_CHECK(cudaMemcpy(p, host.data(), bytes, cudaMemcpyHostToDevice));
    // BUG: a pageable H2D copy may still be in flight.
    SC_CHECK(cudaFreeAsync(p, s1));

    SC_CHECK(cudaDeviceSynchronize());
    SC_CHECK(cudaStreamDestroy(s1));
    return sc::finish();
}
