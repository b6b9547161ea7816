package model

// The sync audit: for each ordering the analyzer makes (a join of the
// happens-before engine, package hb, named by its JoinReason's String, or
// a free taken to wait for the device), the sentence of CUDA's
// documentation that promises it, paraphrased with its page and section,
// or, where none does, what the decision rests on. `go generate ./model`
// writes it into docs/sync-audit.md; hb's and checker's tests fail when
// the engine or the checker orders an op by a rule with no row here.

// OrderFreeWaits is the order of a free that the checker takes to wait
// for the work issued on its device (no join of the engine).
const OrderFreeWaits = "free waits for the device"

// Promise is one row of the sync audit.
type Promise struct {
	Order string // The engine's JoinReason.String, or OrderFreeWaits.
	// Ops are the ops the row covers; OnStream covers every op issued to
	// a stream (Op.OnStream) as well.
	Ops      []Op
	OnStream bool
	Source   string // The page and section of CUDA's documentation.
	Promise  string // What it promises, paraphrased; "" where it promises nothing.
	Evidence string // What else the decision rests on (all of it when Promise is "").
}

// Covers reports whether the row covers op.
func (p Promise) Covers(op Op) bool {
	if p.OnStream && op.OnStream() {
		return true
	}
	for _, o := range p.Ops {
		if o == op {
			return true
		}
	}
	return false
}

// SyncAudit returns the rows of the sync audit.
func SyncAudit() []Promise { return append([]Promise(nil), syncAudit...) }

// Promises returns the rows of the sync audit that cover the op.
func (s OpSpec) Promises() []Promise {
	var rows []Promise
	for _, p := range syncAudit {
		if p.Covers(s.Op) {
			rows = append(rows, p)
		}
	}
	return rows
}

const (
	runtimeStream = "CUDA Runtime API, Stream Management"
	runtimeEvent  = "CUDA Runtime API, Event Management"
	apiSync       = "CUDA Runtime and Driver API, \"API synchronization behavior\""
)

var syncAudit = []Promise{
	{
		Order: "stream sync", Ops: []Op{OpStreamSync},
		Source:  runtimeStream + ", cudaStreamSynchronize (driver: cuStreamSynchronize)",
		Promise: "blocks until the stream has completed all operations",
	},
	{
		Order: "stream query success", Ops: []Op{OpStreamQuery},
		Source:  runtimeStream + ", cudaStreamQuery (driver: cuStreamQuery)",
		Promise: "returns cudaSuccess if all operations in the stream have completed, cudaErrorNotReady if not",
	},
	{
		Order: "event sync", Ops: []Op{OpEventSync},
		Source:  runtimeEvent + ", cudaEventSynchronize (driver: cuEventSynchronize)",
		Promise: "waits until the completion of all work currently captured in the event (cudaEventRecord: the most recent record)",
	},
	{
		Order: "event query success", Ops: []Op{OpEventQuery},
		Source:  runtimeEvent + ", cudaEventQuery (driver: cuEventQuery)",
		Promise: "returns cudaSuccess if all work currently captured by the event has completed",
	},
	{
		Order: "event wait", Ops: []Op{OpStreamWait},
		Source: runtimeStream + ", cudaStreamWaitEvent; " + runtimeEvent + ", cudaEventRecord",
		Promise: "makes all future work submitted to the stream wait for all work captured in the event; a wait uses the most recently captured state at the time of the call, " +
			"and later records do not change it",
		Evidence: "a wait on an event with no record before it orders nothing (cudaEventRecord: before the first record an event represents an empty set of work)",
	},
	{
		Order: "device sync", Ops: []Op{OpDeviceSync},
		Source:  "CUDA Runtime API, Device Management, cudaDeviceSynchronize (driver: cuCtxSynchronize)",
		Promise: "blocks until the device has completed all preceding requested tasks",
	},
	{
		Order: "legacy stream", OnStream: true, Ops: []Op{OpMemcpy, OpMemset},
		Source: "CUDA Runtime and Driver API, \"Stream synchronization behavior\" (default stream, per-thread default stream)",
		Promise: "the legacy default stream synchronizes with all other streams of the context except non-blocking ones: an operation on it waits for their earlier work, and their later work waits for it; " +
			"the per-thread default stream is not a non-blocking stream and synchronizes with the legacy default stream",
		Evidence: "the synchronous memcpy and memset run on the default stream (" + apiSync + "), measured with the shim on CUDA 13.0 (testdata/cuda/legacy_stream_*, memcpy_*); " +
			"that the legacy stream also waits for a destroyed blocking stream's unfinished work, and not a non-blocking one's, is promised nowhere: measured on CUDA 13.0 (testdata/cuda/legacy_after_destroy_*)",
	},
	{
		Order: "peer copy", Ops: []Op{OpMemcpy},
		Source:  "CUDA Runtime API, Memory Management, cudaMemcpyPeer (driver: cuMemcpyPeer)",
		Promise: "asynchronous with respect to the host, but serialized with respect to all pending and future asynchronous work in the current, source and destination devices",
		Evidence: "\"all\" is read as the legacy and blocking streams of those devices: measured on two H200s, the copy did not wait for a non-blocking stream of either device " +
			"(scripts/probe/peer_copy_order.cu, testdata/cuda/multi_device_peer_copy_*)",
	},
	{
		Order: "peer copy barrier", OnStream: true, Ops: []Op{OpMemcpy, OpMemset, OpDeviceSync},
		Source:  "CUDA Runtime API, Memory Management, cudaMemcpyPeer",
		Promise: "the copy is serialized with the future asynchronous work of its devices: their later work waits for it",
		Evidence: "as for the copy itself, non-blocking streams are left out (measured); that a device synchronization of any of the copy's devices waits for it, " +
			"even one issued with another device current, was measured on two H200s (scripts/probe/peer_copy_order.cu)",
	},
	{
		Order: "synchronous copy", Ops: []Op{OpMemcpy, OpMemset},
		Source: apiSync + ", Memcpy and Memset",
		Promise: "a copy from device to pageable or pinned host memory returns only once the copy has completed; from pinned host memory to device memory it is synchronous with respect to the host; " +
			"from any host memory to any host memory it is fully synchronous; a memset is asynchronous with respect to the host except when the target is pinned host memory",
		Evidence: "a device-to-device copy is not a host synchronization (\"no host-side synchronization is performed\")",
	},
	{
		Order: "pageable copy presync", Ops: []Op{OpMemcpy},
		Source: apiSync + ", Memcpy",
		Promise: "for a copy from pageable host memory to device memory a stream sync is performed before the copy is initiated; the function returns once the buffer is staged, " +
			"before the DMA to its destination may have completed",
	},
	{
		Order: "previous graph launch", Ops: []Op{OpGraphLaunch},
		Source:  "CUDA Runtime API, Graph Management, cudaGraphLaunch (driver: cuGraphLaunch)",
		Promise: "each launch is ordered behind both any previous work in the stream and any previous launches of the executable graph",
	},
	{
		Order: "graph event wait", Ops: []Op{OpGraphLaunch},
		Source: runtimeStream + ", cudaStreamWaitEvent (flag cudaEventWaitExternal); Graph Management, cudaGraphAddEventWaitNode",
		Promise: "a wait captured with the external flag becomes an event wait node, and an event wait node, when the graph runs, waits for the work captured in the event, " +
			"as cudaStreamWaitEvent does",
		Evidence: "the launch is taken to wait before all of its graph's work, which is coarser than the node's place in the graph: it can hide a race inside the graph, not make one up",
	},
	{
		Order: "value wait", Ops: []Op{OpStreamMemOp},
		Source:   "CUDA Driver API, Stream Memory Operations, cuStreamWaitValue32/64 and cuStreamBatchMemOp",
		Promise:  "enqueues a synchronization of the stream on a memory location: work ordered after it blocks until the condition on the memory is satisfied",
		Evidence: "which recorded write meets the condition is the analyzer's inference from the values in the trace (docs/ordering.md); waits it cannot follow are stream-memory-op warnings",
	},
	{
		Order: OrderFreeWaits, Ops: []Op{OpFree},
		Source: "CUDA Driver API, Memory Management, cuMemFree; CUDA Programming Guide, stream-ordered memory allocator",
		Promise: "none: cuMemFree skips implicit synchronization for memory from cuMemAllocAsync and says that for all other pointers it \"may perform implicit synchronization\", " +
			"and the guide tells programs not to rely on implicit synchronization",
		Evidence: "cudaFree and cuMemFree of cudaMalloc, pitched and managed memory are taken to wait for the work on their device (and to order nothing else): " +
			"the guide's allocation chapter says cudaMalloc and cudaFree synchronize the device, NVIDIA's samples free such memory with kernels in flight and rely on it, " +
			"and compute-sanitizer's stream-ordered race check reports none of those frees (real-world corpus, docs/real-world.md). " +
			"cudaFreeHost, cuMemFreeHost, cudaHostUnregister and cuMemHostUnregister have no row: their reference says only that they free or unregister the memory, " +
			"\"API synchronization behavior\" says undocumented blocking must not be relied upon, and XLA freed pinned memory with a memset pending (openxla/xla#46093)",
	},
}
