// streamcheck-expect: use-before-alloc
// streamcheck-expect-count: 10
// streamcheck-expect-api: cudaLaunchCooperativeKernel
// streamcheck-expect-api: cuLaunchKernelEx
// streamcheck-expect-api: cuLaunchCooperativeKernel
// streamcheck-expect-api: cuLaunchKernel
// streamcheck-expect-api: cudaMemcpy3DAsync
// streamcheck-expect-api: cudaMemcpy3DPeerAsync
// streamcheck-expect-api: cudaMemcpyPeerAsync
// streamcheck-expect-api: cuMemsetD2D32Async
// streamcheck-expect-api: cudaMemset2DAsync
// streamcheck-expect-api: cudaMemcpy2DAsync
//
// Ten buffers are allocated on s1 behind a 30 ms host callback
// (cudaStreamAddCallback) and a 20 ms spin kernel, then each is used on s2,
// with no synchronization, through a different entry point: runtime
// cudaLaunchCooperativeKernel; driver cuLaunchKernelEx,
// cuLaunchCooperativeKernel and cuLaunchKernel with packed `extra`
// parameters; cudaMemcpy3DAsync, cudaMemcpy3DPeerAsync, cudaMemcpyPeerAsync;
// driver cuMemsetD2D32Async; cudaMemset2DAsync; cudaMemcpy2DAsync. Each use
// is its own call site, so each is its own finding.
#include "entry_points.cuh"

int main() { return ep::run("entry_points_racy", false); }
