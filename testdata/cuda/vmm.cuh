// Virtual memory management helpers for the vmm_* and all_families_ok
// programs: a reserved address range backed chunk by chunk with cuMemCreate
// and cuMemMap, as allocators that grow a buffer in place do. Driver calls
// go through entry points (entry_points.cuh), so no -lcuda is needed.
#pragma once

#include "entry_points.cuh"

namespace vmm {

struct Api {
    decltype(&cuMemGetAllocationGranularity) granularity = ep::driver<decltype(&cuMemGetAllocationGranularity)>("cuMemGetAllocationGranularity");
    decltype(&cuMemAddressReserve) reserve = ep::driver<decltype(&cuMemAddressReserve)>("cuMemAddressReserve");
    decltype(&cuMemAddressFree) address_free = ep::driver<decltype(&cuMemAddressFree)>("cuMemAddressFree");
    decltype(&cuMemCreate) create = ep::driver<decltype(&cuMemCreate)>("cuMemCreate");
    decltype(&cuMemRelease) release = ep::driver<decltype(&cuMemRelease)>("cuMemRelease");
    decltype(&cuMemMap) map = ep::driver<decltype(&cuMemMap)>("cuMemMap");
    decltype(&cuMemUnmap) unmap = ep::driver<decltype(&cuMemUnmap)>("cuMemUnmap");
    decltype(&cuMemSetAccess) set_access = ep::driver<decltype(&cuMemSetAccess)>("cuMemSetAccess");
};

inline CUmemAllocationProp device_prop() {
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    return prop;
}

// One chunk of physical memory mapped at va with read/write access for device 0.
struct Chunk {
    CUmemGenericAllocationHandle handle = 0;
    CUdeviceptr va = 0;
    size_t size = 0;
};

inline size_t granularity(const Api& api) {
    CUmemAllocationProp prop = device_prop();
    size_t g = 0;
    ep::driver_check(api.granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), "cuMemGetAllocationGranularity");
    return g == 0 ? (2u << 20) : g;
}

inline Chunk map_chunk(const Api& api, CUdeviceptr va, size_t size) {
    Chunk c;
    c.va = va;
    c.size = size;
    CUmemAllocationProp prop = device_prop();
    ep::driver_check(api.create(&c.handle, size, &prop, 0), "cuMemCreate");
    ep::driver_check(api.map(va, size, 0, c.handle, 0), "cuMemMap");
    CUmemAccessDesc access = {};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = 0;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    ep::driver_check(api.set_access(va, size, &access, 1), "cuMemSetAccess");
    return c;
}

inline void unmap_chunk(const Api& api, const Chunk& c) {
    ep::driver_check(api.unmap(c.va, c.size), "cuMemUnmap");
    ep::driver_check(api.release(c.handle), "cuMemRelease");
}

}  // namespace vmm
