// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 1
//
// kokkos/kokkos#9307: Kokkos' CUDA backend took cudaFree to imply
// cudaDeviceSynchronize. For stream-ordered memory (CudaSpace allocates
// with cudaMallocAsync and a device synchronization) cudaFree does not
// wait: a kernel on an execution space's own stream may still use the
// View's memory. The kernel touches the buffer first and tells the host,
// then spins for 20 ms, so the early free cannot fault it.
#include "common.cuh"

int main() {
    sc::init("kokkos_cudafree_racy");
    cudaStream_t s = sc::make_stream(true);
    int* p = nullptr;
    SC_CHECK(cudaMallocAsync((void**)&p, sc::kBytes, 0)); // CudaSpace::impl_allocate
    SC_CHECK(cudaDeviceSynchronize());
    sc::HostFlag touched = sc::make_flag();
    sc_touch_signal_spin<<<1, sc::kThreads, 0, s>>>(p, sc::kN, touched.device, sc::ms(20));
    SC_CHECK_LAUNCH();
    sc::wait_flag(touched);

    // BUG: cudaFree of cudaMallocAsync memory does not wait for the kernel.
    SC_CHECK(cudaFree(p)); // CudaSpace::impl_deallocate

    SC_CHECK(cudaDeviceSynchronize());
    sc::free_flag(touched);
    SC_CHECK(cudaStreamDestroy(s));
    return sc::finish();
}
