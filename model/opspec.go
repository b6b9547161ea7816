package model

//go:generate go run mkops.go

// The op spec: one row per op, saying everything the trace formats need to
// know of it. The JSON Lines reader and writer take their field lists from
// it, Op.String, ParseOp and Op.OnStream answer from it, and `go generate
// ./model` writes from it the C header the recording shim numbers its ops
// and flags with (intercept/ops.h) and the op and flag tables of
// docs/trace-format.md; TestGeneratedFilesUpToDate fails when they are
// stale. For the trace formats, adding an op is adding its constant and
// its row here, then running go generate (a field that no op had before
// needs a jsonFields bit and its code in the JSON Lines reader and writer).
// docs/architecture.md ("The op spec's columns") lists the other files a
// new op touches.

// Sync says how an op orders work: what the checker's happens-before
// engine (package hb) makes of it. It documents the op; the engine has the
// details (captures, failed calls, flags).
type Sync uint8

const (
	SyncNone       Sync = iota // Orders nothing: bookkeeping of a handle or a graph.
	SyncIssue                  // Issued to its stream: after the stream's earlier work (a blocking stream's, after the legacy stream's too).
	SyncRecord                 // Issued to its stream; the event takes the stream's work so far.
	SyncWaitEvent              // Issued to its stream, which waits for the event's most recent record.
	SyncCapture                // Begins or ends a stream capture: the stream's work from here on is a graph's, run at its launches.
	SyncHostStream             // The host waits for the stream's work (a query: when it answers success).
	SyncHostEvent              // The host waits for the event's most recent record (a query: when it answers success).
	SyncHostDevice             // The host waits for all the device's streams and the peer copies to or from it.
	SyncHost                   // A step of the host: work issued after it is ordered after it.
	SyncLegacy                 // A synchronous-API copy or set: issued to the legacy (or per-thread) stream; the host waits for it, or for what came before it, as CUDA's rules for its memory say.
	SyncGraph                  // Changes the work a graph's launches do (their events, copies, nodes); orders nothing when made.
	SyncHostFunc               // A host function ran: the host is ordered after the work its stream had before the host function was enqueued.
)

var syncDocs = [...]string{
	SyncNone:       "none",
	SyncIssue:      "issued to the stream, after its earlier work",
	SyncRecord:     "issued to the stream; the event takes the stream's work so far",
	SyncWaitEvent:  "issued to the stream, which waits for the event's most recent record",
	SyncCapture:    "begins or ends a capture of the stream's work into a graph",
	SyncHostStream: "the host is ordered after the stream's work (a query: when it answers success)",
	SyncHostEvent:  "the host is ordered after the event's record (a query: when it answers success)",
	SyncHostDevice: "the host is ordered after the device's streams",
	SyncHost:       "a step of the host, which work issued later follows",
	SyncLegacy:     "on the legacy (or per-thread) stream; the host waits as CUDA's rules for its memory say",
	SyncGraph:      "none now; changes what a graph's launches do",
	SyncHostFunc:   "the host is ordered after the work the host function's stream had before it was enqueued",
}

// String returns a short description, as the trace-format tables give it.
func (s Sync) String() string {
	if int(s) < len(syncDocs) {
		return syncDocs[s]
	}
	return "sync(?)"
}

// OpSpec is one row of the op spec.
type OpSpec struct {
	Op       Op
	Name     string // JSON Lines name, Op.String.
	CName    string // The C constant in intercept/ops.h.
	API      string // The API name a JSON Lines line gets when it has no "api", unless apiOf names another.
	OnStream bool   // Issued to Event.Stream (Op.OnStream).
	Sync     Sync
	// Flags are the Flag* bits the op may carry; a flag's JSON Lines key
	// (flagSpecs) is one of the op's optional fields.
	Flags uint32
	// The op-specific JSON Lines fields a line carries, besides the flags'.
	required, optional jsonFields
	// introduces is jStream or jEvent where a line of the op may name a
	// stream or event not seen before (a create, an event's first record).
	introduces jsonFields
	// apiOf, if set, names the API of a line that API does not describe
	// (a malloc_async from a pool), or returns "".
	apiOf func(*Event) string
	// pageable: the host side of a copy is pageable unless the line says
	// it is not, or that it is pinned (defaultPageable).
	pageable bool
	// notes explain a JSON Lines field of this op in the docs' table, by key.
	notes map[string]string

	// The columns the analyzer runs on (opcolumns.go).
	Mem        Mem       // What the op does to memory.
	Uses       []AddrUse // For MemUse: the addresses it uses, in order.
	Order      Order     // Its ordering family; an op on a stream leaves it out (OrderIssue).
	NamesEvent bool      // Explanations and timelines name its event.
	Category   Category  // Its timeline category; left out: setup.
}

// Spec returns o's row of the op spec; OpInvalid's for an unknown op.
func (o Op) Spec() OpSpec {
	if o < opCount {
		return opSpecs[o]
	}
	return opSpecs[OpInvalid]
}

// OpSpecs returns the rows of every valid op, in op order.
func OpSpecs() []OpSpec { return append([]OpSpec(nil), opSpecs[1:]...) }

// JSONRequired returns the keys a JSON Lines line of the op must have.
func (s OpSpec) JSONRequired() []string { return s.required.keys() }

// JSONOptional returns the op-specific keys a JSON Lines line of the op may
// have: its optional fields', then its flags'.
func (s OpSpec) JSONOptional() []string {
	keys := s.optional.keys()
	for _, f := range flagSpecs {
		if s.Flags&f.Bit != 0 {
			keys = appendNew(keys, f.JSON...)
		}
	}
	return keys
}

// Note returns what the docs say of the op's JSON Lines field key, or "".
func (s OpSpec) Note(key string) string { return s.notes[key] }

// BinaryFields returns the event record fields (docs/trace-format.md, "Event
// payload") that carry something for the op, besides the ones of every op
// (op, seq, tid, device, time, api, stack, result).
func (s OpSpec) BinaryFields() []string {
	var names []string
	for _, f := range jsonFieldSpecs {
		if (s.required|s.optional)&f.bit != 0 {
			names = appendNew(names, f.binary...)
		}
	}
	for _, f := range flagSpecs {
		if s.Flags&f.Bit != 0 {
			names = appendNew(names, f.Binary...)
		}
	}
	// In the record's order.
	var ordered []string
	for _, n := range append(append(eventFields[:], "ptrs"), eventTailFields[:]...) {
		for _, m := range names {
			if n == m {
				ordered = append(ordered, n)
			}
		}
	}
	return ordered
}

// appendNew appends those of add that s lacks.
func appendNew(s []string, add ...string) []string {
next:
	for _, a := range add {
		for _, x := range s {
			if x == a {
				continue next
			}
		}
		s = append(s, a)
	}
	return s
}

// Op is the kind of a recorded operation.
//
// The numeric values are part of the binary trace format: never renumber,
// only append. Each op has a row in the op spec (opSpecs, below), from which
// the recording shim's numbers (intercept/ops.h) are generated; a new op is
// its constant here, before opCount, and its row.
type Op uint8

const (
	OpInvalid Op = iota

	OpStreamCreate  // Stream created; Flags has StreamNonBlocking, Priority is set.
	OpStreamDestroy // Stream destroyed; its handle may be reused by a later create.
	OpEventCreate   // Event created.
	OpEventRecord   // Event records the work issued to Stream so far.
	OpEventDestroy  // Event destroyed.
	OpStreamWait    // Stream waits for the most recent record of Event.
	OpStreamSync    // Host waits for all work issued to Stream.
	OpEventSync     // Host waits for the work captured by Event.
	OpDeviceSync    // Host waits for all work on Device (device or context synchronize).
	OpStreamQuery   // Host asks whether Stream is idle; Result says the answer.
	OpEventQuery    // Host asks whether Event completed; Result says the answer.
	OpMallocAsync   // Stream-ordered allocation of Size bytes at Ptr on Stream (Pool set for pool allocations).
	OpMalloc        // Synchronous allocation of Size bytes at Ptr, of family Family (cudaMalloc, cudaMallocPitch, cudaMallocManaged, cudaMallocHost, cudaHostRegister, ...).
	OpFreeAsync     // Stream-ordered free of Ptr on Stream.
	OpFree          // Synchronous free of Ptr by the API of family Family (cudaFree, cudaFreeHost, cudaHostUnregister, ...).
	OpLaunch        // Kernel launch on Stream; Kernel names it, Ptrs holds device addresses found in its parameters.
	OpMemcpyAsync   // Copy of Size bytes from Src to Ptr on Stream; Kind is the direction.
	OpMemcpy        // Synchronous copy (cudaMemcpy) of Size bytes from Src to Ptr; Kind, Flags (FlagPageable).
	OpMemsetAsync   // Set of Size bytes at Ptr on Stream.
	OpMemset        // Synchronous-API set (cudaMemset) of Size bytes at Ptr.
	OpHostFunc      // Host function enqueued on Stream; Value is its token (see OpHostFnRun), 0 if it has none.
	OpCaptureBegin  // Stream capture begins on Stream; Graph is the graph it builds, when known: a new one (FlagLifetime), or the one cudaStreamBeginCaptureToGraph adds to.
	OpCaptureEnd    // Stream capture ends on Stream; Graph is the graph it made.
	OpGraphLaunch   // Executable graph Exec launched on Stream.
	OpPoolCreate    // Memory pool Pool created.
	// OpGraphInstantiate makes executable graph Exec from Graph
	// (cudaGraphInstantiate), or updates Exec to Graph's work
	// (cudaGraphExecUpdate).
	OpGraphInstantiate
	// OpGraphForget says that the work of Graph (if set) or of Exec (if
	// set) is no longer known: destroyed, created anew, or changed by a
	// node given new parameters or a kind of node the trace does not
	// follow. Graph AllGraphs forgets every graph (a node changed, and the
	// trace does not say in which graph); executable graphs keep the work
	// they were instantiated with. Node names the node destroyed
	// (cudaGraphDestroyNode) or changed in Exec (cudaGraphNodeSetEnabled;
	// a child graph node given graph Src).
	OpGraphForget
	// OpGraphEventRecordNode says that graph node Node of Graph records
	// Event at each launch: a node added (cudaGraphAddEventRecordNode;
	// FlagLifetime set) or given another event, in Graph
	// (cudaGraphEventRecordNodeSetEvent) or in executable graph Exec
	// (cudaGraphExecEventRecordNodeSetEvent).
	OpGraphEventRecordNode
	// OpGraphEventWaitNode is the same for a node that waits for Event's
	// most recent record (cudaGraphAddEventWaitNode and the SetEvent calls
	// of wait nodes).
	OpGraphEventWaitNode
	// OpGraphClone copies the work of graph Src into Graph: a new graph
	// (cudaGraphClone; FlagLifetime set) or a child graph node added to
	// Graph (cudaGraphAddChildGraphNode, which embeds a copy of Src). With
	// FlagConditional, Src is a body graph of a conditional node added to
	// Graph: not copied now, but run, as it is when Graph is instantiated,
	// any number of times at each launch.
	OpGraphClone
	// OpStreamMemOp is a stream memory operation on Stream
	// (cuStreamWaitValue32/64, cuStreamWriteValue32/64, one operation of a
	// cuStreamBatchMemOp): MemOp says which, Ptr is the address it waits on
	// or writes, Value the value and MemFlags CUDA's flags. A wait for a
	// value that a recorded write gives is ordered after that write.
	OpStreamMemOp
	// OpPoolExport exports memory pool Pool to a shareable handle
	// (cuMemPoolExportToShareableHandle) that another process can import.
	OpPoolExport
	// OpPoolImport makes Pool this process's handle of a pool another
	// process exported (cuMemPoolImportFromShareableHandle).
	OpPoolImport
	// OpPtrExport exports the allocation at Ptr, made from an exportable
	// pool, for another process to import (cuMemPoolExportPointer). Value
	// is a key of the export data: the importer's OpPtrImport of the same
	// data has the same Value.
	OpPtrExport
	// OpPtrImport maps into this process, at Ptr, an allocation of
	// imported pool Pool that another process exported
	// (cuMemPoolImportPointer); Size is its size when known, Value the
	// export data's key (see OpPtrExport). The pointer is live from here
	// until this process frees it (cudaFreeAsync), which it must do before
	// the exporter frees the allocation.
	OpPtrImport
	// OpIpcEventExport gets an interprocess handle of Event
	// (cuIpcGetEventHandle); Value is the handle's key, which the
	// importer's OpIpcEventOpen of the same handle has too.
	OpIpcEventExport
	// OpIpcEventOpen makes Event this process's handle of an event of
	// another process (cuIpcOpenEventHandle); Value is the handle's key.
	// Records made in the other process are not in this trace: a wait for
	// the event orders nothing that the trace can see, and is no wait for
	// an event never recorded.
	OpIpcEventOpen
	// OpIpcMemExport gets an interprocess handle of the cudaMalloc memory
	// at Ptr (cuIpcGetMemHandle); Value is the handle's key.
	OpIpcMemExport
	// OpIpcMemOpen maps, at Ptr, the memory another process exported with
	// a handle of key Value (cuIpcOpenMemHandle); Size is its size when
	// known.
	OpIpcMemOpen
	// OpIpcMemClose unmaps memory at Ptr that OpIpcMemOpen mapped
	// (cuIpcCloseMemHandle).
	OpIpcMemClose
	// OpVmmMap maps physical memory at [Ptr, Ptr+Size) of a reserved
	// virtual address range (cuMemMap): the range is live, as an
	// allocation, from here until an OpVmmUnmap of it. A range mapped
	// right after another (a buffer grown in place) is an allocation of
	// its own.
	OpVmmMap
	// OpVmmUnmap unmaps [Ptr, Ptr+Size) (cuMemUnmap): the end of the
	// mapped ranges in it. It does not wait for the device: the host must
	// be ordered after every use of the range before it.
	OpVmmUnmap
	// OpPoolSetAttr sets attribute Attr of memory pool Pool (0: the
	// device's default pool) to Value (cuMemPoolSetAttribute,
	// cudaMemPoolSetAttribute).
	OpPoolSetAttr
	// OpDeviceSetPool makes Pool the current pool of device Device
	// (cuDeviceSetMemPool, cudaDeviceSetMemPool): a malloc_async that
	// names no pool allocates from it from now on.
	OpDeviceSetPool
	// OpPoolTrim releases the memory of Pool beyond Value bytes that no
	// allocation uses (cuMemPoolTrimTo, cudaMemPoolTrimTo).
	OpPoolTrim
	// OpHostFnRun is a host function starting to run, recorded on the
	// thread that runs it: Value is the token of the OpHostFunc that
	// enqueued it. All work issued to that stream before the enqueue is
	// complete then, and host calls recorded after it (on any thread) are
	// ordered after that work.
	OpHostFnRun
	// OpCollective is an NCCL (or RCCL) communication call that names
	// buffers and a stream (ncclAllReduce, ncclBroadcast, ncclAllGather,
	// ncclSend, ncclRecv, ...; API names it): work issued to Stream that
	// reads SrcSize bytes at Src and writes Size bytes at Ptr. A side the
	// call does not use on this rank (a send's receive buffer, a
	// broadcast's send buffer off the root) is 0; an in-place call has
	// Src == Ptr. Ranks is the communicator's rank count, from which the
	// sizes of gathers, scatters and all-to-all follow.
	OpCollective
	// OpPrefetch migrates [Ptr, Ptr+Size) of managed memory to a device
	// or the host, on Stream (cuMemPrefetchAsync): a use of the range in
	// stream order, as a read (its data does not change).
	OpPrefetch

	opCount
)

var opSpecs = [opCount]OpSpec{
	OpInvalid: {Name: "invalid"},
	OpStreamCreate: {
		Name: "stream_create", CName: "OP_STREAM_CREATE", API: "cudaStreamCreateWithFlags",
		Order: OrderStreamCreate,
		Sync:  SyncNone, Flags: FlagNonBlocking | FlagImplicit,
		required: jStream, optional: jPriority, introduces: jStream,
		notes: map[string]string{"flags": "`\"blocking\"` default, or `\"non_blocking\"`"},
	},
	OpStreamDestroy: {
		Name: "stream_destroy", CName: "OP_STREAM_DESTROY", API: "cudaStreamDestroy",
		Order: OrderStreamDestroy,
		Sync:  SyncNone, required: jStream,
	},
	OpEventCreate: {
		Name: "event_create", CName: "OP_EVENT_CREATE", API: "cudaEventCreate",
		Order: OrderEventCreate, NamesEvent: true,
		Sync: SyncNone, Flags: FlagImplicit, required: jEvent, introduces: jEvent,
	},
	OpEventRecord: {
		Name: "event_record", CName: "OP_EVENT_RECORD", API: "cudaEventRecord",
		NamesEvent: true, Category: CatSync,
		OnStream: true, Sync: SyncRecord, Flags: FlagExternal, required: jEvent | jStream, introduces: jEvent,
	},
	OpEventDestroy: {
		Name: "event_destroy", CName: "OP_EVENT_DESTROY", API: "cudaEventDestroy",
		Order: OrderEventDestroy, NamesEvent: true,
		Sync: SyncNone, required: jEvent,
	},
	OpStreamWait: {
		Name: "stream_wait_event", CName: "OP_STREAM_WAIT", API: "cudaStreamWaitEvent",
		NamesEvent: true, Category: CatSync,
		OnStream: true, Sync: SyncWaitEvent, Flags: FlagExternal, required: jStream | jEvent,
	},
	OpStreamSync: {
		Name: "stream_sync", CName: "OP_STREAM_SYNC", API: "cudaStreamSynchronize",
		Order: OrderStreamSync, Category: CatSync,
		Sync: SyncHostStream, required: jStream,
	},
	OpEventSync: {
		Name: "event_sync", CName: "OP_EVENT_SYNC", API: "cudaEventSynchronize",
		Order: OrderEventSync, NamesEvent: true, Category: CatSync,
		Sync: SyncHostEvent, required: jEvent,
	},
	OpDeviceSync: {
		Name: "device_sync", CName: "OP_DEVICE_SYNC", API: "cudaDeviceSynchronize",
		Order: OrderDeviceSync, Category: CatSync,
		Sync: SyncHostDevice,
	},
	OpStreamQuery: {
		Name: "stream_query", CName: "OP_STREAM_QUERY", API: "cudaStreamQuery",
		Order: OrderStreamSync, Category: CatSync,
		Sync: SyncHostStream, required: jStream | jResult,
		notes: map[string]string{"result": "`\"success\"` or `\"not_ready\"`"},
	},
	OpEventQuery: {
		Name: "event_query", CName: "OP_EVENT_QUERY", API: "cudaEventQuery",
		Order: OrderEventSync, NamesEvent: true, Category: CatSync,
		Sync: SyncHostEvent, required: jEvent | jResult,
	},
	OpMallocAsync: {
		Name: "malloc_async", CName: "OP_MALLOC_ASYNC", API: "cudaMallocAsync",
		Mem: MemAllocOrdered, Category: CatMemory,
		OnStream: true, Sync: SyncIssue, Flags: FlagGraphAlloc,
		required: jStream | jPtr | jSize, optional: jPool, apiOf: mallocAPI,
	},
	OpMalloc: {
		Name: "malloc", CName: "OP_MALLOC", API: "cudaMalloc",
		Mem: MemAlloc, Order: OrderAlloc, Category: CatMemory,
		Sync: SyncHost, required: jPtr | jSize, optional: jFamily | jPitch, apiOf: familyAPI,
		notes: map[string]string{
			"kind":   "`device` (the default), `pitched` (with `pitch` and `height`), `managed`, `host` (pinned), `registered`, `module` (a loaded module's global variable, from `cuModuleGetGlobal`, `cuLibraryGetGlobal`, `cuLibraryGetManaged`; it lives until the module is unloaded): binary field 31",
			"pitch":  "a pitched allocation's row pitch in bytes, binary field 32",
			"height": "its rows, binary field 33",
		},
	},
	OpFreeAsync: {
		Name: "free_async", CName: "OP_FREE_ASYNC", API: "cudaFreeAsync",
		Mem: MemFree, Category: CatMemory,
		OnStream: true, Sync: SyncIssue, required: jStream | jPtr,
	},
	OpFree: {
		Name: "free", CName: "OP_FREE", API: "cudaFree",
		Mem: MemFree, Order: OrderAlloc, Category: CatMemory,
		Sync: SyncHost, required: jPtr, optional: jFamily, apiOf: familyAPI,
		notes: map[string]string{
			"kind": "the family the API frees: `device` (the default: `cudaFree`, `cuMemFree`), `host` (`cudaFreeHost`, `cuMemFreeHost`), `unregister` (`cudaHostUnregister`, `cuMemHostUnregister`): binary field 31",
		},
	},
	OpLaunch: {
		Name: "launch", CName: "OP_LAUNCH", API: "cudaLaunchKernel",
		Mem: MemUse, Uses: []AddrUse{{AddrPtrs, ReadWrite}}, Category: CatWork,
		OnStream: true, Sync: SyncIssue, Flags: FlagGraphNode,
		required: jStream, optional: jKernel,
		notes: map[string]string{
			"ptrs":      "list of addresses: strong matches, pointer slots",
			"weak_ptrs": "list of addresses that only words outside pointer slots matched: binary field 29",
			"graph":     "a node of that graph, flag bit 8",
		},
	},
	OpMemcpyAsync: {
		Name: "memcpy_async", CName: "OP_MEMCPY_ASYNC", API: "cudaMemcpyAsync",
		Mem: MemUse, Uses: copyUses, Category: CatCopy,
		OnStream: true, Sync: SyncIssue, Flags: FlagPageable | FlagPinned | FlagGraphNode,
		required: jStream | jDst | jSrc | jSize | jKind,
		notes: map[string]string{
			"kind":  "`h2d`, `d2h`, `d2d`, `h2h`, `default`",
			"graph": "as for `launch`",
		},
	},
	OpMemcpy: {
		Name: "memcpy", CName: "OP_MEMCPY", API: "cudaMemcpy",
		Mem: MemUse, Uses: copyUses, Order: OrderCopy, Category: CatCopy,
		Sync: SyncLegacy, Flags: FlagPageable | FlagPinned | FlagPeer,
		required: jDst | jSrc | jSize | jKind, optional: jStream, pageable: true,
		notes: map[string]string{
			"pageable": "default true for kinds `h2d`, `d2h`, `h2h` unless `pinned` is true",
			"stream":   "`legacy`, the default, or `per_thread` for a program built with per-thread default streams",
			"peer_src": "with `peer_dst`, both or neither: a synchronous peer copy, flag bit 7, between those devices",
		},
	},
	OpMemsetAsync: {
		Name: "memset_async", CName: "OP_MEMSET_ASYNC", API: "cudaMemsetAsync",
		Mem: MemUse, Uses: []AddrUse{{AddrPtr, Write}}, Category: CatCopy,
		OnStream: true, Sync: SyncIssue, Flags: FlagPageable | FlagPinned | FlagGraphNode,
		required: jStream | jPtr | jSize,
		notes:    map[string]string{"graph": "as for `launch`"},
	},
	OpMemset: {
		Name: "memset", CName: "OP_MEMSET", API: "cudaMemset",
		Mem: MemUse, Uses: []AddrUse{{AddrPtr, Write}}, Order: OrderCopy, Category: CatCopy,
		Sync: SyncLegacy, Flags: FlagPageable | FlagPinned,
		required: jPtr | jSize, optional: jStream,
		notes: map[string]string{"stream": "as for `memcpy`"},
	},
	OpHostFunc: {
		Name: "host_func", CName: "OP_HOST_FUNC", API: "cudaLaunchHostFunc",
		Category: CatWork,
		OnStream: true, Sync: SyncIssue, required: jStream, optional: jValue,
		notes: map[string]string{"value": "the host function's token, which the `host_fn_run` of its run carries (absent or 0: no run is recorded); also `cudaStreamAddCallback`"},
	},
	OpCaptureBegin: {
		Name: "capture_begin", CName: "OP_CAPTURE_BEGIN", API: "cudaStreamBeginCapture",
		OnStream: true, Sync: SyncCapture, Flags: FlagLifetime,
		required: jStream, optional: jGraphName,
		notes: map[string]string{
			"graph":    "the graph it builds",
			"lifetime": "true: a new graph; without it, `graph` is one it adds to, `cudaStreamBeginCaptureToGraph`",
		},
	},
	OpCaptureEnd: {
		Name: "capture_end", CName: "OP_CAPTURE_END", API: "cudaStreamEndCapture",
		OnStream: true, Sync: SyncCapture, required: jStream, optional: jGraphName,
		notes: map[string]string{"graph": "the graph's name"},
	},
	OpGraphLaunch: {
		Name: "graph_launch", CName: "OP_GRAPH_LAUNCH", API: "cudaGraphLaunch",
		Mem: MemGraph, Category: CatWork,
		OnStream: true, Sync: SyncIssue, required: jStream, optional: jExec,
	},
	OpPoolCreate: {
		Name: "pool_create", CName: "OP_POOL_CREATE", API: "cudaMemPoolCreate",
		Order: OrderAlloc, Category: CatMemory,
		Sync: SyncHost, required: jPool,
	},
	OpGraphInstantiate: {
		Name: "graph_instantiate", CName: "OP_GRAPH_INSTANTIATE", API: "cudaGraphInstantiate",
		Order: OrderGraphChange,
		Sync:  SyncGraph, Flags: FlagLifetime, optional: jGraphName | jExec,
	},
	OpGraphForget: {
		Name: "graph_forget", CName: "OP_GRAPH_FORGET", API: "cudaGraphDestroy",
		Order: OrderGraphChange,
		Sync:  SyncGraph, Flags: FlagLifetime, optional: jGraphName | jExec | jFrom | jNode,
		notes: map[string]string{"from": "the new child graph of the node"},
	},
	OpGraphEventRecordNode: {
		Name: "graph_event_record_node", CName: "OP_GRAPH_EVENT_RECORD_NODE", API: "cudaGraphAddEventRecordNode",
		Order: OrderGraphEventNode,
		Sync:  SyncGraph, Flags: FlagLifetime, required: jEvent, optional: jGraphName | jExec | jNode,
		notes: map[string]string{
			"exec":     "the graph or executable graph whose launches record the event",
			"node":     "the node's name",
			"lifetime": "the node is new",
		},
	},
	OpGraphEventWaitNode: {
		Name: "graph_event_wait_node", CName: "OP_GRAPH_EVENT_WAIT_NODE", API: "cudaGraphAddEventWaitNode",
		Order: OrderGraphEventNode,
		Sync:  SyncGraph, Flags: FlagLifetime, required: jEvent, optional: jGraphName | jExec | jNode,
		notes: map[string]string{"exec": "whose launches wait for it"},
	},
	OpGraphClone: {
		Name: "graph_clone", CName: "OP_GRAPH_CLONE", API: "cudaGraphClone",
		Order: OrderGraphClone,
		Sync:  SyncGraph, Flags: FlagLifetime | FlagConditional, required: jGraphName | jFrom, optional: jNode,
		notes: map[string]string{
			"from":        "the name of the graph copied",
			"lifetime":    "a new graph, `cudaGraphClone`; without it the copy is a child graph node added to `graph`",
			"conditional": "true: `from` is the body of a conditional node added to `graph`, run as it is at the instantiation",
			"node":        "that conditional node's name",
		},
	},
	OpStreamMemOp: {
		Name: "stream_mem_op", CName: "OP_STREAM_MEMOP", API: "cuStreamWaitValue32",
		Mem: MemUse, Uses: []AddrUse{{AddrMemOp, ReadWrite}},
		OnStream: true, Sync: SyncIssue, Flags: FlagGraphNode, required: jStream, optional: jPtr | jMemOp, apiOf: memOpAPI,
		notes: map[string]string{
			"ptr":       "the address a wait or write names",
			"graph":     "a batch memory operation node of that graph, flag bit 8",
			"mem_op":    "`wait32`, `wait64`, `write32`, `write64`, `atomic`, `flush`, `barrier`; left out: not described, binary field 26",
			"value":     "a number, or a string in hex or decimal; written in hex",
			"mem_flags": "a number: binary field 27",
		},
	},
	OpPoolExport: {
		Name: "pool_export", CName: "OP_POOL_EXPORT", API: "cudaMemPoolExportToShareableHandle",
		Order: OrderNothing,
		Sync:  SyncNone, required: jPool,
	},
	OpPoolImport: {
		Name: "pool_import", CName: "OP_POOL_IMPORT", API: "cudaMemPoolImportFromShareableHandle",
		Order: OrderNothing,
		Sync:  SyncNone, required: jPool,
		notes: map[string]string{"pool": "the imported pool's handle in this process"},
	},
	OpPtrExport: {
		Name: "ptr_export", CName: "OP_PTR_EXPORT", API: "cudaMemPoolExportPointer",
		Order: OrderNothing,
		Sync:  SyncNone, required: jPtr, optional: jValue,
		notes: map[string]string{"value": "the export data's key, as binary field 28"},
	},
	OpPtrImport: {
		Name: "ptr_import", CName: "OP_PTR_IMPORT", API: "cudaMemPoolImportPointer",
		Mem: MemAllocOrdered, Order: OrderAlloc, Category: CatMemory,
		Sync: SyncHost, required: jPtr, optional: jPool | jSize | jValue,
		notes: map[string]string{
			"ptr":   "the address in this process",
			"pool":  "the imported pool",
			"value": "the key the exporter's `ptr_export` has",
		},
	},
	OpIpcEventExport: {
		Name: "ipc_event_export", CName: "OP_IPC_EVENT_EXPORT", API: "cudaIpcGetEventHandle",
		Order: OrderNothing,
		Sync:  SyncNone, required: jEvent, optional: jValue,
		notes: map[string]string{"value": "the handle's key"},
	},
	OpIpcEventOpen: {
		Name: "ipc_event_open", CName: "OP_IPC_EVENT_OPEN", API: "cudaIpcOpenEventHandle",
		Order: OrderIpcEventOpen,
		Sync:  SyncNone, required: jEvent, optional: jValue, introduces: jEvent,
		notes: map[string]string{"event": "this process's handle; introduces the name"},
	},
	OpIpcMemExport: {
		Name: "ipc_mem_export", CName: "OP_IPC_MEM_EXPORT", API: "cudaIpcGetMemHandle",
		Order: OrderNothing,
		Sync:  SyncNone, required: jPtr, optional: jValue,
	},
	OpIpcMemOpen: {
		Name: "ipc_mem_open", CName: "OP_IPC_MEM_OPEN", API: "cudaIpcOpenMemHandle",
		Mem: MemAlloc, Order: OrderAlloc, Category: CatMemory,
		Sync: SyncHost, required: jPtr, optional: jSize | jValue,
	},
	OpIpcMemClose: {
		Name: "ipc_mem_close", CName: "OP_IPC_MEM_CLOSE", API: "cudaIpcCloseMemHandle",
		Mem: MemFree, Order: OrderAlloc, Category: CatMemory,
		Sync: SyncHost, required: jPtr,
	},
	OpVmmMap: {
		Name: "vmm_map", CName: "OP_VMM_MAP", API: "cuMemMap",
		Mem: MemAlloc, Order: OrderAlloc,
		Sync: SyncHost, required: jPtr | jSize,
		notes: map[string]string{"ptr": "the start of the mapped range (a reserved address plus the offset mapped at)"},
	},
	OpVmmUnmap: {
		Name: "vmm_unmap", CName: "OP_VMM_UNMAP", API: "cuMemUnmap",
		Mem: MemUnmap, Order: OrderAlloc,
		Sync: SyncHost, required: jPtr | jSize,
	},
	OpPoolSetAttr: {
		Name: "pool_set_attr", CName: "OP_POOL_SET_ATTR", API: "cudaMemPoolSetAttribute",
		Order: OrderNothing,
		Sync:  SyncNone, required: jPool | jAttr | jValue,
		notes: map[string]string{
			"pool":  "a pool's name, or `default`: the device's default pool (handle 0)",
			"attr":  "`release_threshold` (CUDA's attribute 4, binary field 34), or CUDA's number of another attribute",
			"value": "the value set: a number, or a string in hex or decimal (`cudaMemPoolAttrReleaseThreshold`: bytes)",
		},
	},
	OpDeviceSetPool: {
		Name: "device_set_pool", CName: "OP_DEVICE_SET_POOL", API: "cudaDeviceSetMemPool",
		Order: OrderNothing,
		Sync:  SyncNone, required: jPool,
		notes: map[string]string{"pool": "the pool the event's device allocates from when a malloc_async names none; `default` for its default pool"},
	},
	OpPoolTrim: {
		Name: "pool_trim", CName: "OP_POOL_TRIM", API: "cudaMemPoolTrimTo",
		Order: OrderNothing,
		Sync:  SyncNone, required: jPool, optional: jValue,
		notes: map[string]string{"value": "the bytes the pool may keep (`minBytesToKeep`)"},
	},
	OpHostFnRun: {
		Name: "host_fn_run", CName: "OP_HOST_FN_RUN", API: "host function",
		Order: OrderHostFnRun, Category: CatSync,
		Sync: SyncHostFunc, required: jValue,
		notes: map[string]string{"value": "the token of the `host_func` that enqueued the host function; recorded on the thread that runs it, as it starts"},
	},
	OpCollective: {
		Name: "collective", CName: "OP_COLLECTIVE", API: "ncclAllReduce",
		Mem: MemUse, Uses: []AddrUse{{AddrPtr, Write}, {AddrSrc, Read}}, Category: CatWork,
		OnStream: true, Sync: SyncIssue, required: jStream, optional: jDst | jSrc | jSize | jColl,
		notes: map[string]string{
			"dst":      "the receive buffer it writes; absent: none on this rank (`ncclSend`, a reduce or gather off the root)",
			"src":      "the send buffer it reads; absent: none (`ncclRecv`, a broadcast or scatter off the root); equal to `dst`: in place",
			"size":     "the bytes written at `dst`",
			"src_size": "the bytes read at `src`: binary field 35",
			"nranks":   "the communicator's rank count: binary field 36",
		},
	},
	OpPrefetch: {
		Name: "prefetch", CName: "OP_PREFETCH", API: "cudaMemPrefetchAsync",
		Mem: MemUse, Uses: []AddrUse{{AddrPtr, Read}}, Category: CatCopy,
		OnStream: true, Sync: SyncIssue, required: jStream | jPtr | jSize,
	},
}

// copyUses are a copy's: its destination, written, then its source, read.
var copyUses = []AddrUse{{AddrDst, Write}, {AddrCopySrc, Read}}

// onStreamOps has bit o set for each op o on a stream: Op.OnStream is
// asked of every event the checker analyzes.
var onStreamOps uint64

func init() {
	fillColumns()
	for i := range opSpecs {
		opSpecs[i].Op = Op(i)
		if opSpecs[i].OnStream {
			onStreamOps |= 1 << i
		}
	}
}

// FlagSpec is one row of the flag spec: a Flag* bit of Event.Flags.
type FlagSpec struct {
	Bit    uint32
	Name   string   // The Go constant.
	CName  string   // The C constant in intercept/ops.h.
	JSON   []string // The JSON Lines keys that carry it.
	Binary []string // Event record fields it gives a meaning to, besides flags.
	Doc    string   // One line, for the C header.
}

var flagSpecs = [...]FlagSpec{
	{FlagNonBlocking, "FlagNonBlocking", "FLAG_NON_BLOCKING", []string{"flags"}, nil, "non-blocking stream"},
	{FlagPageable, "FlagPageable", "FLAG_PAGEABLE", []string{"pageable"}, nil, "host side of a copy or set is pageable memory"},
	{FlagImplicit, "FlagImplicit", "FLAG_IMPLICIT", []string{"implicit"}, nil, "stream or event first seen in use: created before recording began"},
	{FlagPinned, "FlagPinned", "FLAG_PINNED", []string{"pinned"}, nil, "host side of a copy or set is known page-locked memory"},
	{FlagGraphAlloc, "FlagGraphAlloc", "FLAG_GRAPH_ALLOC", []string{"graph"}, nil, "OP_MALLOC_ASYNC by a graph's memory node"},
	{FlagExternal, "FlagExternal", "FLAG_EXTERNAL", []string{"external"}, nil, "event record or wait with the external flag"},
	{FlagLifetime, "FlagLifetime", "FLAG_LIFETIME", []string{"lifetime"}, nil, "graph instantiate/forget/clone that creates or destroys its object; a new event node"},
	{FlagPeer, "FlagPeer", "FLAG_PEER", []string{"peer_src", "peer_dst"}, []string{"peer_src", "peer_dst"}, "synchronous peer copy: serialized with its devices' work"},
	{FlagGraphNode, "FlagGraphNode", "FLAG_GRAPH_NODE", []string{"graph"}, []string{"graph"}, "launch, copy or set added to a graph as a node, not issued to a stream"},
	{FlagConditional, "FlagConditional", "FLAG_CONDITIONAL", []string{"conditional"}, nil, "graph clone: a conditional node's body graph (src) in graph"},
	{FlagRawWords, "FlagRawWords", "FLAG_RAW_WORDS", nil, []string{"weak", "live"}, "launch: ptrs are the parameter words unmatched, the last live of the weak ones live-only (model/launchwords.go)"},
}

// FlagSpecs returns the rows of every flag, lowest bit first.
func FlagSpecs() []FlagSpec { return append([]FlagSpec(nil), flagSpecs[:]...) }

// knownFlags holds every flag of the spec: a binary trace with another
// bit set is from a newer recorder.
var knownFlags = func() uint32 {
	var all uint32
	for _, f := range flagSpecs {
		all |= f.Bit
	}
	return all
}()

// jsonFieldSpecs name the JSON Lines keys of each field set, in the order
// the writer writes them, and the event record fields they carry.
var jsonFieldSpecs = [...]struct {
	bit    jsonFields
	keys   []string
	binary []string
}{
	{jStream, []string{"stream"}, []string{"stream"}},
	{jEvent, []string{"event"}, []string{"event"}},
	{jPool, []string{"pool"}, []string{"pool"}},
	{jPtr, []string{"ptr"}, []string{"ptr"}},
	{jDst, []string{"dst"}, []string{"ptr"}},
	{jSrc, []string{"src"}, []string{"src"}},
	{jSize, []string{"size"}, []string{"size"}},
	{jKind, []string{"kind"}, []string{"kind"}},
	{jKernel, []string{"kernel", "ptrs", "weak_ptrs"}, []string{"kernel", "nptrs", "ptrs", "weak"}},
	{jPriority, []string{"priority"}, []string{"prio"}},
	{jGraphName, []string{"graph"}, []string{"graph"}},
	{jExec, []string{"exec"}, []string{"exec"}},
	{jFrom, []string{"from"}, []string{"src"}},
	{jNode, []string{"node"}, []string{"node"}},
	{jMemOp, []string{"mem_op", "mem_flags", "value"}, []string{"mem_op", "mem_flags", "value"}},
	{jValue, []string{"value"}, []string{"value"}},
	{jFamily, []string{"kind"}, []string{"family"}},
	{jPitch, []string{"pitch", "height"}, []string{"pitch", "height"}},
	{jAttr, []string{"attr"}, []string{"attr"}},
	{jColl, []string{"src_size", "nranks"}, []string{"src_size", "nranks"}},
	{jResult, []string{"result"}, nil}, // every op's; required of queries
}

// keys returns the JSON Lines keys of the fields in f, in the writer's order.
func (f jsonFields) keys() []string {
	var keys []string
	for _, s := range jsonFieldSpecs {
		if f&s.bit != 0 {
			keys = appendNew(keys, s.keys...)
		}
	}
	return keys
}
