package checker

import "github.com/streamcheck/streamcheck/model"

// family is the API family an allocation came from: model.Family for a
// malloc, or the families that are ops of their own.
type family uint8

const (
	famDevice            = family(model.FamilyDevice)
	famPitched           = family(model.FamilyPitched)
	famManaged           = family(model.FamilyManaged)
	famHost              = family(model.FamilyHost)
	famRegistered        = family(model.FamilyRegistered)
	famModule            = family(model.FamilyModule)
	famAsync      family = 8 // cudaMallocAsync, from a pool, a graph's allocation, an imported pointer
	famVMM        family = 9 // A range mapped with cuMemMap.
	famIPC        family = 10
)

// familyOf returns the family of the memory ev allocates.
func familyOf(ev *model.Event) family {
	switch ev.Op {
	case model.OpMalloc:
		return family(ev.Family)
	case model.OpVmmMap:
		return famVMM
	case model.OpIpcMemOpen:
		return famIPC
	}
	return famAsync
}

// describe names memory of the family made by api, for a report:
// "cudaMallocHost pinned host memory".
func (f family) describe(api string) string {
	noun := map[family]string{
		famDevice:     "device memory",
		famPitched:    "pitched device memory",
		famManaged:    "managed memory",
		famHost:       "pinned host memory",
		famRegistered: "registered host memory",
		famModule:     "module global variable",
		famAsync:      "stream-ordered memory",
		famVMM:        "mapped virtual memory",
		famIPC:        "memory of another process",
	}[f]
	if api == "" {
		return noun
	}
	return runtimeSuffix.ReplaceAllString(api, "") + " " + noun
}

// frees returns the API that frees memory of the family made by api: the
// driver's when api is a driver call.
func (f family) frees(api string) string {
	driver := isDriverAPI(api)
	pick := func(runtime, drv string) string {
		if driver {
			return drv
		}
		return runtime
	}
	switch f {
	case famHost:
		return pick("cudaFreeHost", "cuMemFreeHost")
	case famRegistered:
		return pick("cudaHostUnregister", "cuMemHostUnregister")
	case famAsync:
		return pick("cudaFreeAsync", "cuMemFreeAsync")
	case famVMM:
		return "cuMemUnmap (then cuMemRelease of its handle)"
	case famIPC:
		return pick("cudaIpcCloseMemHandle", "cuIpcCloseMemHandle")
	case famModule:
		return "the unload of its module (cuModuleUnload, cuLibraryUnload)"
	}
	return pick("cudaFree", "cuMemFree")
}

// freedBy reports whether a free by ev (a free, free_async or vmm_unmap)
// is one of the family's own: cudaFree and cuMemFree free device, pitched,
// managed and stream-ordered memory; cudaFreeAsync stream-ordered and
// cudaMalloc memory (pitched too); cudaFreeHost pinned host memory,
// cudaHostUnregister registered memory, cuMemUnmap mapped ranges.
func (f family) freedBy(ev *model.Event) bool {
	switch ev.Op {
	case model.OpFree:
		switch ev.Family {
		case model.FamilyHost:
			return f == famHost
		case model.FamilyRegistered:
			return f == famRegistered
		}
		return f == famDevice || f == famPitched || f == famManaged || f == famAsync
	case model.OpFreeAsync:
		return f == famAsync || f == famDevice || f == famPitched
	case model.OpVmmUnmap:
		return f == famVMM
	}
	return true
}

// freeWaits reports whether a free by ev of memory of the family waits for
// the work issued on its device before releasing it: cudaFree and
// cuMemFree of cudaMalloc, pitched and managed memory do (the driver
// reference: cuMemFree "may perform implicit synchronization" for all but
// cuMemAllocAsync pointers, and programs rely on it). cudaFreeHost,
// cuMemFreeHost, cudaHostUnregister and cuMemHostUnregister promise no
// synchronization (openxla/xla#46093 freed a pinned buffer with a memset
// still pending), and a free of stream-ordered memory waits for nothing.
func (f family) freeWaits(ev *model.Event) bool {
	return ev.Op == model.OpFree && ev.Family == model.FamilyDevice && (f == famDevice || f == famPitched || f == famManaged)
}
