/* Prints the CUPTI and driver ABI facts the shim relies on, from the real
 * headers on the GPU machine: struct offsets and callback names. */
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <cuda.h>
#include <cupti.h>

#define OFF(T, m) printf("offsetof(%s, %s) = %zu\n", #T, #m, offsetof(T, m))

int main(void) {
	printf("sizeof(CUpti_CallbackData) = %zu\n", sizeof(CUpti_CallbackData));
	OFF(CUpti_CallbackData, callbackSite);
	OFF(CUpti_CallbackData, functionName);
	OFF(CUpti_CallbackData, functionParams);
	OFF(CUpti_CallbackData, functionReturnValue);
	OFF(CUpti_CallbackData, symbolName);
	OFF(CUpti_CallbackData, context);
	OFF(CUpti_CallbackData, contextUid);
	OFF(CUpti_CallbackData, correlationData);
	OFF(CUpti_CallbackData, correlationId);
	OFF(cuLaunchKernel_params, hStream);
	OFF(cuLaunchKernel_params, kernelParams);
	OFF(cuLaunchKernel_params, extra);
	OFF(cuLaunchKernelEx_params, config);
	OFF(cuLaunchKernelEx_params, kernelParams);
	OFF(CUlaunchConfig, hStream);
	OFF(cuMemAllocAsync_params, hStream);
	OFF(cuMemAllocFromPoolAsync_params, pool);
	OFF(cuMemAllocFromPoolAsync_params, hStream);
	OFF(cuMemcpy2DAsync_v2_params, hStream);
	OFF(cuLaunchCooperativeKernel_params, hStream);
	OFF(cuStreamWaitEvent_params, Flags);
	OFF(CUDA_MEMCPY2D, srcDevice);
	OFF(CUDA_MEMCPY2D, dstDevice);
	OFF(CUDA_MEMCPY2D, WidthInBytes);
	OFF(CUDA_MEMCPY3D, srcDevice);
	OFF(CUDA_MEMCPY3D, dstDevice);
	OFF(CUDA_MEMCPY3D, WidthInBytes);
	OFF(CUDA_MEMCPY3D, Depth);
	printf("CU_POINTER_ATTRIBUTE_MEMORY_TYPE = %d\n", CU_POINTER_ATTRIBUTE_MEMORY_TYPE);
	printf("CU_MEMORYTYPE_HOST = %d\n", CU_MEMORYTYPE_HOST);
	CUpti_CallbackDomain doms[2] = {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RUNTIME_API};
	for (int d = 0; d < 2; d++) {
		int n = 0;
		for (CUpti_CallbackId id = 0; id < 4000; id++) {
			const char *name = NULL;
			if (cuptiGetCallbackName(doms[d], id, &name) != CUPTI_SUCCESS || !name) continue;
			n++;
			if (strstr(name, "Alloc") || strstr(name, "Free") || strstr(name, "Launch") || strstr(name, "Event") ||
			    strstr(name, "Stream") || strstr(name, "Synchronize") || strstr(name, "Memcpy") ||
			    strstr(name, "Memset") || strstr(name, "Pool") || strstr(name, "Graph"))
				printf("dom%d cbid %u %s\n", doms[d], id, name);
		}
		printf("domain %d: %d named callbacks\n", doms[d], n);
	}
	return 0;
}
