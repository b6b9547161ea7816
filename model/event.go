package model

import (
	"fmt"
	"strconv"
	"strings"
)

// String returns the JSON Lines name of the op ("malloc_async", ...).
func (o Op) String() string {
	if o < opCount {
		return opSpecs[o].Name
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Valid reports whether o is a known op other than OpInvalid.
func (o Op) Valid() bool { return o > OpInvalid && o < opCount }

// ParseOp returns the op with the given JSON Lines name.
func ParseOp(name string) (Op, bool) {
	for _, s := range opSpecs[1:] {
		if s.Name == name {
			return s.Op, true
		}
	}
	return OpInvalid, false
}

// OnStream reports whether the op is issued to Event.Stream (as opposed to
// being a host-side call that names no stream).
func (o Op) OnStream() bool { return o < 64 && onStreamOps&(1<<o) != 0 }

// MemcpyKind is the direction of a copy.
type MemcpyKind uint8

const (
	CopyDefault MemcpyKind = iota // Unified addressing decides; both sides may be device memory.
	CopyH2D
	CopyD2H
	CopyD2D
	CopyH2H
)

var copyNames = [...]string{"default", "h2d", "d2h", "d2d", "h2h"}

func (k MemcpyKind) String() string {
	if int(k) < len(copyNames) {
		return copyNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ParseMemcpyKind returns the kind with the given JSON Lines name.
func ParseMemcpyKind(name string) (MemcpyKind, bool) {
	for i, n := range copyNames {
		if n == name {
			return MemcpyKind(i), true
		}
	}
	return CopyDefault, false
}

// DstDevice reports whether the destination may be device memory.
func (k MemcpyKind) DstDevice() bool { return k == CopyDefault || k == CopyH2D || k == CopyD2D }

// SrcDevice reports whether the source may be device memory.
func (k MemcpyKind) SrcDevice() bool { return k == CopyDefault || k == CopyD2H || k == CopyD2D }

// MemOpKind is what a stream memory operation does (Event.MemOp). The
// values are CUDA's CUstreamBatchMemOpType; zero is an operation the trace
// does not describe: recorded before the kind was, or of a type the
// recorder did not know (then Value holds CUDA's type number).
type MemOpKind uint8

const (
	MemOpUnknown MemOpKind = 0
	MemOpWait32  MemOpKind = 1 // cuStreamWaitValue32
	MemOpWrite32 MemOpKind = 2 // cuStreamWriteValue32
	MemOpFlush   MemOpKind = 3 // flush remote writes
	MemOpWait64  MemOpKind = 4 // cuStreamWaitValue64
	MemOpWrite64 MemOpKind = 5 // cuStreamWriteValue64
	MemOpBarrier MemOpKind = 6 // memory barrier
	// MemOpAtomic is an atomic reduction (add, and, or) of Value into
	// memory at Ptr (CUDA 13.1): a write whose result the trace does not
	// know. MemFlags holds the data type's width in bytes (4 or 8; 0 if
	// unknown).
	MemOpAtomic MemOpKind = 8
)

// memOpNames holds the JSON Lines names by kind; "" is no kind (CUDA has
// no type 7).
var memOpNames = [...]string{"unknown", "wait32", "write32", "flush", "wait64", "write64", "barrier", "", "atomic"}

func (k MemOpKind) String() string {
	if k.Valid() {
		return memOpNames[k]
	}
	return fmt.Sprintf("mem_op(%d)", uint8(k))
}

// Valid reports whether k is one of the kinds above.
func (k MemOpKind) Valid() bool { return int(k) < len(memOpNames) && memOpNames[k] != "" }

// ParseMemOpKind returns the kind with the given JSON Lines name.
func ParseMemOpKind(name string) (MemOpKind, bool) {
	for i, n := range memOpNames {
		if n == name && n != "" {
			return MemOpKind(i), true
		}
	}
	return MemOpUnknown, false
}

// IsWait reports whether k waits for a value in memory.
func (k MemOpKind) IsWait() bool { return k == MemOpWait32 || k == MemOpWait64 }

// IsWrite reports whether k writes a known value to memory.
func (k MemOpKind) IsWrite() bool { return k == MemOpWrite32 || k == MemOpWrite64 }

// Changes reports whether k changes memory at Ptr: a write, or an atomic
// reduction, whose result is not known.
func (k MemOpKind) Changes() bool { return k.IsWrite() || k == MemOpAtomic }

// Width is the bytes a wait or write reads or writes (4 or 8), 0 for others
// (an atomic reduction's is in its MemFlags).
func (k MemOpKind) Width() uint64 {
	switch k {
	case MemOpWait32, MemOpWrite32:
		return 4
	case MemOpWait64, MemOpWrite64:
		return 8
	}
	return 0
}

// Family is the allocation family of an OpMalloc (Event.Family): which
// API made the memory, and so which API frees it. For an OpFree it is the
// family the free's API releases: FamilyDevice for cudaFree and cuMemFree
// (which also free pitched and managed memory), FamilyHost for
// cudaFreeHost and cuMemFreeHost, FamilyRegistered for cudaHostUnregister
// and cuMemHostUnregister. Zero is the default: cudaMalloc memory, and
// what traces recorded before families were say.
type Family uint8

const (
	FamilyDevice     Family = 0 // cudaMalloc, cuMemAlloc; a free: cudaFree, cuMemFree.
	FamilyPitched    Family = 1 // cudaMallocPitch, cuMemAllocPitch: Pitch bytes a row, Height rows.
	FamilyManaged    Family = 2 // cudaMallocManaged, cuMemAllocManaged.
	FamilyHost       Family = 3 // Pinned host memory: cudaMallocHost, cudaHostAlloc, cuMemAllocHost, cuMemHostAlloc; a free: cudaFreeHost, cuMemFreeHost.
	FamilyRegistered Family = 4 // cudaHostRegister, cuMemHostRegister; a free: cudaHostUnregister, cuMemHostUnregister.
	// FamilyModule is a loaded module's global variable, whose address and
	// size cuModuleGetGlobal, cuLibraryGetGlobal or cuLibraryGetManaged
	// (cudaGetSymbolAddress) gives: memory the module load allocated and
	// its unload frees, which no free API releases.
	FamilyModule Family = 5
)

// familyNames holds the JSON Lines "kind" of a malloc by family, and
// freeFamilyNames that of a free ("" where no free API has the family).
var (
	familyNames     = [...]string{"device", "pitched", "managed", "host", "registered", "module"}
	freeFamilyNames = [...]string{"device", "", "", "host", "unregister", ""}
)

// String returns the JSON Lines name of the family of a malloc.
func (f Family) String() string {
	if f.Valid() {
		return familyNames[f]
	}
	return fmt.Sprintf("family(%d)", uint8(f))
}

// Valid reports whether f is one of the families above.
func (f Family) Valid() bool { return int(f) < len(familyNames) }

// Frees reports whether f is a family some free API releases (the kind of
// an OpFree).
func (f Family) Frees() bool { return f.Valid() && freeFamilyNames[f] != "" }

// FreeName returns the JSON Lines "kind" of a free that releases f.
func (f Family) FreeName() string {
	if f.Frees() {
		return freeFamilyNames[f]
	}
	return f.String()
}

// ParseFamily returns the family a malloc's JSON Lines "kind" names, or
// with free set a free's.
func ParseFamily(name string, free bool) (Family, bool) {
	names := familyNames[:]
	if free {
		names = freeFamilyNames[:]
	}
	for i, n := range names {
		if n == name && n != "" {
			return Family(i), true
		}
	}
	return FamilyDevice, false
}

// PoolAttr is the attribute an OpPoolSetAttr sets (Event.Attr): CUDA's
// CUmemPool_attribute value.
type PoolAttr uint8

const (
	PoolAttrUnknown PoolAttr = 0
	// PoolAttrReleaseThreshold is CU_MEMPOOL_ATTR_RELEASE_THRESHOLD
	// (cudaMemPoolAttrReleaseThreshold): the bytes of unused memory the
	// pool keeps at a synchronization instead of releasing them. It is 0
	// for a new pool and for the default pool until set.
	PoolAttrReleaseThreshold PoolAttr = 4
)

// String returns the JSON Lines name of the attribute.
func (a PoolAttr) String() string {
	if a == PoolAttrReleaseThreshold {
		return "release_threshold"
	}
	return strconv.Itoa(int(a))
}

// ParsePoolAttr reads a JSON Lines "attr": "release_threshold", or CUDA's
// number of another attribute.
func ParsePoolAttr(name string) (PoolAttr, bool) {
	if name == "release_threshold" {
		return PoolAttrReleaseThreshold, true
	}
	n, err := strconv.ParseUint(name, 10, 8)
	if err != nil || strconv.FormatUint(n, 10) != name {
		return PoolAttrUnknown, false
	}
	return PoolAttr(n), true
}

// CUDA's flags of a stream memory operation (Event.MemFlags): a wait's
// condition in its low bits, and the flush flag; a write's barrier flag.
const (
	MemWaitGEQ        uint32 = 0 // (int)(*addr - value) >= 0, a cyclic comparison
	MemWaitEQ         uint32 = 1 // *addr == value
	MemWaitAND        uint32 = 2 // (*addr & value) != 0
	MemWaitNOR        uint32 = 3 // ~(*addr | value) != 0
	MemWaitCondMask   uint32 = 0xf
	MemWaitFlush      uint32 = 1 << 30
	MemWriteNoBarrier uint32 = 1 // the write may pass the stream's earlier writes
)

// Satisfies reports whether a value written to memory meets a wait of
// kind k (MemOpWait32 or MemOpWait64) for value with flags, and whether
// the condition is one this package knows (false for an unknown one).
func (k MemOpKind) Satisfies(written, value uint64, flags uint32) (met, known bool) {
	if k == MemOpWait32 {
		written, value = uint64(uint32(written)), uint64(uint32(value))
	}
	switch flags & MemWaitCondMask {
	case MemWaitGEQ:
		if k == MemOpWait32 {
			return int32(uint32(written)-uint32(value)) >= 0, true
		}
		return int64(written-value) >= 0, true
	case MemWaitEQ:
		return written == value, true
	case MemWaitAND:
		return written&value != 0, true
	case MemWaitNOR:
		v := ^(written | value)
		if k == MemOpWait32 {
			v = uint64(uint32(v))
		}
		return v != 0, true
	}
	return false, false
}

// Event flags (Event.Flags). Each has a row in the flag spec (opspec.go),
// from which the recording shim's (intercept/ops.h) are generated.
const (
	FlagNonBlocking uint32 = 1 << 0 // OpStreamCreate: the stream does not synchronize with the legacy stream.
	FlagPageable    uint32 = 1 << 1 // OpMemcpy/OpMemcpyAsync/OpMemset: the host side is pageable memory.
	FlagImplicit    uint32 = 1 << 2 // OpStreamCreate, OpEventCreate: synthesized for a stream or event first seen in use (created before recording began).
	FlagPinned      uint32 = 1 << 3 // OpMemcpy/OpMemset: the host side is known page-locked memory.
	// FlagGraphAlloc marks an OpMallocAsync made by a graph's memory
	// allocation node (cudaGraphAddMemAllocNode, or cudaGraphAddNode of that
	// type), not by a stream: the address is the graph's, allocated anew at
	// each launch. Stream is unused.
	FlagGraphAlloc uint32 = 1 << 4
	// FlagExternal marks an OpEventRecord or OpStreamWait made with the
	// external flag (cudaEventRecordExternal, cudaEventWaitExternal). Outside
	// a capture it changes nothing; captured, the record or wait becomes
	// part of the graph, and takes effect at each launch of it.
	FlagExternal uint32 = 1 << 5
	// FlagLifetime marks an OpGraphInstantiate, OpGraphForget or
	// OpGraphClone that creates or destroys the object its handle names
	// (cudaGraphInstantiate, cudaGraphCreate, cudaGraphClone,
	// cudaGraphDestroy, cudaGraphExecDestroy), so that a handle used again
	// names another object, an OpGraphEvent*Node that adds its node, and
	// an OpCaptureBegin whose Graph is the new graph the capture builds
	// (cudaStreamBeginCapture; without it, Graph is one it adds to).
	// Without it, the call changes the object in place
	// (cudaGraphExecUpdate, nodes added or given new parameters).
	FlagLifetime uint32 = 1 << 6
	// FlagPeer marks an OpMemcpy made by a synchronous peer copy
	// (cudaMemcpyPeer, cudaMemcpy3DPeer): it waits for, and is waited on by,
	// the streams that synchronize with the legacy stream on the current
	// device (Device) and on the devices of its source and destination
	// (PeerSrc, PeerDst).
	FlagPeer uint32 = 1 << 7
	// FlagGraphNode marks an OpLaunch, OpMemcpyAsync, OpMemsetAsync or
	// OpStreamMemOp that is a node added to graph Graph by hand
	// (cudaGraphAddKernelNode, cudaGraphAddMemcpyNode,
	// cudaGraphAddMemsetNode, cuGraphAddBatchMemOpNode, one operation each,
	// cudaGraphAddNode of those types), not work issued to a stream: each
	// launch of the graph makes its uses. Stream is unused.
	FlagGraphNode uint32 = 1 << 8
	// FlagConditional marks an OpGraphClone that gives graph Graph a
	// conditional node (cudaGraphAddNode of cudaGraphNodeTypeConditional:
	// if, while, switch) with body graph Src. The driver makes the body
	// empty; the program fills it later (cudaStreamBeginCaptureToGraph,
	// nodes added by hand), and each launch of an executable graph made
	// from Graph runs the body's work as it was at the instantiation, zero
	// or more times.
	FlagConditional uint32 = 1 << 9
	// FlagRawWords (OpLaunch, binary traces only) says that Ptrs holds the
	// launch's parameter words that may be addresses, unmatched: the
	// reader matches them against the trace's allocations and clears the
	// flag (launchwords.go), so no Event a reader returns has it.
	FlagRawWords uint32 = 1 << 10
)

// Result codes. Zero is success; NotReady is the answer of a query whose
// work has not completed. Other values are the CUDA error code of a failed
// call; a failed call changed nothing and is not analyzed as a use.
const (
	ResultSuccess  int32 = 0
	ResultNotReady int32 = 600 // cudaErrorNotReady / CUDA_ERROR_NOT_READY
	// ResultCaptureInvalidated is what cudaStreamEndCapture returns for a
	// capture that an unsupported call invalidated: the capture ends anyway.
	ResultCaptureInvalidated int32 = 901 // cudaErrorStreamCaptureInvalidated / CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
	// cudaStreamEndCapture on the origin stream also ends the capture when
	// it fails with these (measured on CUDA 13).
	ResultCaptureUnjoined    int32 = 904 // cudaErrorStreamCaptureUnjoined: a fork never rejoined
	ResultCaptureWrongThread int32 = 908 // cudaErrorStreamCaptureWrongThread
)

// AllGraphs in OpGraphForget's Graph stands for every graph.
const AllGraphs = ^uint64(0)

// Stream handles with a fixed meaning. Other handles are opaque values
// (driver CUstream pointers, or synthetic ids given to JSON Lines names).
const (
	StreamLegacy    uint64 = 0 // The legacy default stream (handle 0, cudaStreamLegacy).
	StreamLegacyAlt uint64 = 1 // Driver CU_STREAM_LEGACY; readers normalize it to StreamLegacy.
	StreamPerThread uint64 = 2 // The per-thread default stream of the event's host thread.
)

// StringID indexes a trace's string table; 0 is the empty string.
type StringID uint32

// StackID indexes a trace's stack table; 0 means no stack was recorded.
type StackID uint32

// Event is one recorded CUDA call.
//
// Fields that an op does not use are zero. Readers reuse one Event (and its
// Ptrs backing array) between calls of Next, so callers that keep an event
// past the next call must copy it (see Clone).
type Event struct {
	Seq    uint64 // Position in the process's total order of recorded calls (strictly increasing).
	Op     Op
	TID    uint32     // Host thread that made the call.
	Device int32      // CUDA device ordinal.
	Time   int64      // Host timestamp, nanoseconds since the trace started.
	API    StringID   // User-facing API name, e.g. "cudaMallocAsync".
	Stack  StackID    // Host call stack at the call.
	Result int32      // ResultSuccess, ResultNotReady or the CUDA error code.
	Stream uint64     // Stream handle for ops on a stream, and OpStreamCreate/Destroy/Sync/Query.
	Event  uint64     // Event handle for event ops and OpStreamWait.
	Ptr    uint64     // Allocation address, free address, or copy/set destination.
	Size   uint64     // Bytes allocated, copied or set.
	Src    uint64     // Copy source; the graph an OpGraphClone copies, or that replaced node Node's child graph in Exec (OpGraphForget).
	Kind   MemcpyKind // Copy direction.
	Flags  uint32     // Flag* bits.
	Pool   uint64     // Memory pool handle (OpMallocAsync from a pool, OpPoolCreate, OpPool{Export,Import,SetAttr,Trim}, OpPtrImport, OpDeviceSetPool); 0 is the device's default pool.
	Kernel StringID   // Kernel name (OpLaunch).
	Prio   int32      // Stream priority (OpStreamCreate).
	Ptrs   []uint64   // Device addresses found in a launch's parameters (OpLaunch): the strong matches, then Weak weak ones.
	Graph  uint64     // Graph handle (OpCaptureEnd: made; OpCaptureBegin: built, or added to; OpGraphInstantiate, OpGraphForget, OpGraphEvent*Node; OpGraphClone: the copy, or the parent of a child graph node; FlagGraphNode: the node's); 0 if unknown.
	Exec   uint64     // Executable graph handle (OpGraphInstantiate, OpGraphLaunch, OpGraphForget, OpGraphEvent*Node); 0 if unknown.
	// PeerSrc and PeerDst are, with FlagPeer, the devices of a peer copy's
	// source and destination.
	PeerSrc, PeerDst int32
	// Node is the graph node an OpGraphEvent*Node adds (with FlagLifetime)
	// or gives another event, the conditional node whose body an
	// OpGraphClone with FlagConditional names, or the node an OpGraphForget destroyed
	// (cudaGraphDestroyNode; Graph is AllGraphs) or changed in executable
	// graph Exec (cudaGraphNodeSetEnabled, a child graph's new
	// parameters); 0 if unknown.
	Node uint64
	// MemOp, MemFlags and Value describe an OpStreamMemOp: what it does,
	// CUDA's flags (MemWait*, MemWriteNoBarrier) and the value it waits
	// for or writes. Value is also the key of the interprocess data an
	// OpPtrExport, OpPtrImport, OpIpc{Event,Mem}{Export,Open} passes, and
	// the token that links an OpHostFunc to its OpHostFnRun.
	MemOp    MemOpKind
	MemFlags uint32
	Value    uint64
	// Weak is how many of the last Ptrs are weak matches: words of a
	// launch's parameters that are not pointer slots (a word inside an
	// aggregate parameter other than its first; docs/launch-arguments.md).
	// 0 for every other event, and in traces recorded before the grading.
	Weak uint32
	// Dur is the host time spent inside the call, in nanoseconds; 0 when
	// not recorded (the shim records it for allocations and frees).
	Dur uint64
	// Family is the allocation family of an OpMalloc, or the family an
	// OpFree's API releases (see Family). Pitch and Height are a pitched
	// allocation's row pitch in bytes and its rows (Size is their product).
	Family        Family
	Pitch, Height uint64
	// Attr is the pool attribute an OpPoolSetAttr sets to Value.
	Attr PoolAttr
	// SrcSize is the bytes an OpCollective reads at Src, and Ranks the
	// rank count of its communicator (0: not recorded).
	SrcSize uint64
	Ranks   uint32
}

// Clone returns a copy of e that does not share Ptrs.
func (e *Event) Clone() Event {
	c := *e
	if e.Ptrs != nil {
		c.Ptrs = append([]uint64(nil), e.Ptrs...)
	}
	return c
}

// StrongPtrs returns the launch addresses found in pointer slots (Ptrs less
// the weak ones).
func (e *Event) StrongPtrs() []uint64 { return e.Ptrs[:len(e.Ptrs)-e.weak()] }

// WeakPtrs returns the launch addresses that only words inside aggregate
// parameters matched.
func (e *Event) WeakPtrs() []uint64 { return e.Ptrs[len(e.Ptrs)-e.weak():] }

// weak is Weak bounded by len(Ptrs), for events built by hand.
func (e *Event) weak() int { return min(int(e.Weak), len(e.Ptrs)) }

// Failed reports whether the call returned an error (a query's NotReady is
// an answer, not an error).
func (e *Event) Failed() bool {
	return e.Result != ResultSuccess && !(e.Result == ResultNotReady && (e.Op == OpStreamQuery || e.Op == OpEventQuery))
}

// Frame is one host call-stack frame. The shim records PC and Module; a
// symbolizer or a hand-written trace fills Func, File and Line.
type Frame struct {
	PC     uint64
	Module uint32 // Index into the trace's module table; 0 = unknown.
	Func   StringID
	File   StringID
	Line   uint32
}

// Module is one loaded object of the traced process, for symbolization.
type Module struct {
	ID   uint32
	Base uint64 // Load address.
	Size uint64
	Path StringID
}

// ObjectKind says what an object name (Name record) refers to.
type ObjectKind uint8

const (
	ObjectStream ObjectKind = 1
	ObjectEvent  ObjectKind = 2
	ObjectPool   ObjectKind = 3
)

// Process describes the traced process.
type Process struct {
	PID     uint32
	PPID    uint32
	Exe     StringID
	Start   int64 // Unix nanoseconds at trace start.
	Version StringID
	// Args is the command line, arguments separated by spaces (cut at 1 KiB):
	// for an interpreter it names the script ("python3 train.py").
	Args StringID
}

// RecordsPoolAttributes reports whether the trace of the process records
// every pool attribute call (pool_set_attr): false for a recording by a
// shim that predates the op (recorder "streamcheck-intercept 0.1.x"),
// whose traces cannot say whether a pool's release threshold was set;
// true for other recorders and for hand-written traces, which say what
// happened. t holds the process's strings.
func (p Process) RecordsPoolAttributes(t *Tables) bool {
	return !strings.HasPrefix(t.String(p.Version), recorderWithoutPoolAttributes)
}

// shimRecorder starts the version string of every trace the shim wrote.
const shimRecorder = "streamcheck-intercept "

// recorderWithoutPoolAttributes is the version prefix of the recorders
// that did not record pool attributes.
const recorderWithoutPoolAttributes = shimRecorder + "0.1."
