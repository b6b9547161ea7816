package checker

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// Frame is one resolved host stack frame.
type Frame struct {
	Func   string `json:"func,omitempty"`
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	PC     uint64 `json:"pc,omitempty"`
	Module string `json:"module,omitempty"`
}

// String formats the frame as "func file:line", falling back to
// "module+0xoff" when nothing better is known.
func (f Frame) String() string {
	var parts []string
	if f.Func != "" {
		parts = append(parts, f.Func)
	}
	if f.File != "" {
		if f.Line > 0 {
			parts = append(parts, fmt.Sprintf("%s:%d", f.File, f.Line))
		} else {
			parts = append(parts, f.File)
		}
	}
	if len(parts) == 0 {
		if f.Module != "" {
			return fmt.Sprintf("%s+0x%x", f.Module, f.PC)
		}
		return fmt.Sprintf("0x%x", f.PC)
	}
	return strings.Join(parts, " ")
}

// Op is one operation a finding refers to.
type Op struct {
	Role string `json:"role"` // "allocation", "use", "free", "earlier use", "use of the freed allocation", "wait", "event record node"; "in the graph" (GraphNode).
	Seq  uint64 `json:"seq"`
	API  string `json:"api"`
	Op   string `json:"op"`
	// Stream is the stream's stable id: the name the trace gives it, else
	// s1, s2, ... in creation order, or "legacy", "per_thread(tid 7)";
	// empty for host calls. StreamName is the program's own name for it,
	// where its source tells (the variable assigned at the line that
	// created it, "s2"), and StreamRef how sentences name it: "stream
	// `s2`", "stream s5 (created at main.cu:42)", "the legacy default
	// stream".
	Stream     string `json:"stream,omitempty"`
	StreamName string `json:"stream_name,omitempty"`
	StreamRef  string `json:"-"`
	StreamKind string `json:"stream_kind,omitempty"`
	// StreamHandle is the stream's handle in the traced process, and
	// StreamCreatedAt the call site that created it, when recorded: where
	// the program's streams were made by one helper, the caller's line
	// that tells them apart, "main app.cu:12 (via make_stream)".
	// StreamFirstUsedAt is set when the creation does not tell the stream
	// apart from others (a pool's streams, made in one loop: PyTorch's),
	// or was not recorded: the site of the program's first call on it.
	StreamHandle      uint64 `json:"stream_handle,omitempty"`
	StreamCreatedAt   string `json:"stream_created_at,omitempty"`
	StreamFirstUsedAt string `json:"stream_first_used_at,omitempty"`
	// Device is the stream's device, set when the trace used more than one.
	Device *int32 `json:"device,omitempty"`
	TID    uint32 `json:"tid"`
	Kernel string `json:"kernel,omitempty"`
	// Bytes is a collective's size: the larger of what it reads and
	// what it writes.
	Bytes uint64 `json:"bytes,omitempty"`
	Ptr   uint64 `json:"ptr,omitempty"` // Address the operation named.
	// Rejected says CUDA refused the call with an error: it changed
	// nothing, but the program still made it.
	Rejected bool    `json:"rejected,omitempty"`
	Stack    []Frame `json:"stack,omitempty"` // The program's own frames, innermost first.
	// FoldedFrames counts the frames of CUDA, the C runtime and streamcheck
	// left out of Stack.
	FoldedFrames int           `json:"folded_frames,omitempty"`
	StackID      model.StackID `json:"-"`
	Agent        hb.AgentID    `json:"-"`
	// GraphNode is, for a graph launch, the operation captured into the
	// graph (or the node added to it by hand) that makes this use, free
	// or allocation at each launch.
	GraphNode *Op `json:"graph_node,omitempty"`
}

// Site returns the operation's innermost Python function of the program's
// own code (else its innermost Python function), else its innermost frame
// that names a source location, or a description of the call when no stack
// was recorded.
func (o *Op) Site() string {
	if i := o.SiteFrame(); i >= 0 {
		return o.Stack[i].String()
	}
	return fmt.Sprintf("call #%d", o.Seq)
}

// SiteFrame returns the index in Stack of the frame Site names, or -1 when
// no stack was recorded.
func (o *Op) SiteFrame() int {
	// In a Python program the place to act on is the innermost Python
	// function of the program's own code: the Python libraries it called
	// (torch.nn, Triton's launcher, the standard library) and the C++ or
	// Cython frames inside them are the libraries'. A program that is all
	// library code is placed in its innermost Python function.
	innermost := -1
	for i, f := range o.Stack {
		if strings.HasPrefix(f.Func, "py::") {
			if !pythonLibrary(f.File) {
				return i
			}
			if innermost < 0 {
				innermost = i
			}
		}
	}
	if innermost >= 0 {
		return innermost
	}
	for i, f := range o.Stack {
		if f.File != "" {
			return i
		}
	}
	if len(o.Stack) > 0 {
		return 0
	}
	return -1
}

// pythonLibrary reports whether a Python source file is installed library
// code: a package in site-packages or dist-packages, the standard library
// (lib/pythonX.Y), or a frozen module ("<frozen runpy>").
func pythonLibrary(file string) bool {
	file = filepath.ToSlash(file)
	if strings.HasPrefix(file, "<") || strings.Contains(file, "/site-packages/") || strings.Contains(file, "/dist-packages/") {
		return true
	}
	for rest := file; ; {
		i := strings.Index(rest, "/lib/python")
		if i < 0 {
			return false
		}
		rest = rest[i+len("/lib/python"):]
		version, _, found := strings.Cut(rest, "/")
		if found && version != "" && strings.Trim(version, "0123456789.") == "" {
			return true
		}
	}
}

// Place describes the operation as Where does, but a host call without its
// thread id: what stays the same when the program is run again.
func (o *Op) Place() string {
	if o.Stream == "" {
		return fmt.Sprintf("%s on the host at %s", what(o), o.Site())
	}
	return o.Where()
}

// Where describes the operation for a sentence: "cudaMallocAsync on stream
// s1 at app.cu:10".
func (o *Op) Where() string {
	if o.Stream == "" {
		return fmt.Sprintf("%s on host thread %d at %s", what(o), o.TID, o.Site())
	}
	return fmt.Sprintf("%s at %s", what(o), o.Site())
}

// Alloc describes the allocation a finding is about.
type Alloc struct {
	Ptr  uint64 `json:"ptr"`
	Size uint64 `json:"size"`
	Op
	// Import is set for memory another process exported and this one
	// imported (cudaMemPoolImportPointer, cudaIpcOpenMemHandle): Op is the
	// import.
	Import *Import `json:"import,omitempty"`
}

// Import says where imported memory came from.
type Import struct {
	// Key identifies the data the exporter passed (model.Event.Value):
	// the exporter's export of the memory has the same key.
	Key uint64 `json:"key"`
	// PID and Export are the exporting process and its export call, when
	// its trace was analyzed with this one (see LinkImports).
	PID    uint32 `json:"pid,omitempty"`
	Export *Op    `json:"export,omitempty"`
}

// Export is a process's export of memory for other processes to import
// (cudaMemPoolExportPointer, cudaIpcGetMemHandle).
type Export struct {
	Key uint64 // As Import.Key.
	Op  Op     // The export call.
}

// Finding is one bug: every occurrence of one root cause is folded into one
// Finding with a Count. Occurrences with the same rule, the same two call
// sites and the same two streams are one root cause, whichever allocations
// they hit (Allocations counts those); so are a use-before-alloc and a
// reuse-while-in-flight at one use site on one stream, unordered after the
// same other stream (Also names the rule folded in). The operations and
// the allocation reported are the first occurrence's.
type Finding struct {
	Rule     string   `json:"rule"` // A RuleID.
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	Alloc    *Alloc   `json:"allocation,omitempty"`
	// Ops are the operations in conflict: the one reported first, then the
	// one it conflicts with, if any.
	Ops []Op   `json:"operations"`
	Why string `json:"why"`
	Fix string `json:"fix,omitempty"`
	// Capture names the stream whose capture made the graph a race is in:
	// both operations were captured, and the race happens at every launch.
	Capture string `json:"capture,omitempty"`
	// captureRef names the capturing stream in sentences (Op.StreamRef).
	captureRef string
	Count      int `json:"count"`
	// Allocations is how many distinct allocations the occurrences hit
	// (0 for findings about no allocation), counted up to
	// MaxCountedAllocations; AllocationsAtLeast says the count stopped there.
	Allocations        int  `json:"allocation_count,omitempty"`
	AllocationsAtLeast bool `json:"allocation_count_at_least,omitempty"`
	// Also lists the other rules whose occurrences were folded into this
	// finding because they have the same root cause (see Finding).
	Also  []string `json:"also,omitempty"`
	Trace string   `json:"trace,omitempty"`
	// Process says which process of a recorded tree the trace is: its pid,
	// program and command line (which names the script of an interpreter).
	PID     uint32 `json:"pid,omitempty"`
	Exe     string `json:"exe,omitempty"`
	Command string `json:"command,omitempty"`
	// sharedEvent marks a wait on an event shared with other processes,
	// ipcEvent its key: LinkImports keeps the finding only when another
	// process of the tree shares the event and none records it.
	sharedEvent bool
	ipcEvent    uint64
}

// MaxCountedAllocations bounds the distinct allocations remembered per
// finding, so that a bug repeated on every allocation of a long trace does
// not make memory grow with it.
const MaxCountedAllocations = 1 << 16

// Repeats says how often a finding occurred and on how many allocations,
// for a report: "7 times, 3 allocations", "2 times", or "" for a finding
// that occurred once.
func (f *Finding) Repeats() string {
	if f.Count <= 1 {
		return ""
	}
	s := fmt.Sprintf("%d times", f.Count)
	switch {
	case f.AllocationsAtLeast:
		s += fmt.Sprintf(", %d or more allocations", f.Allocations)
	case f.Allocations > 1:
		s += fmt.Sprintf(", %d allocations", f.Allocations)
	}
	return s
}

// MarshalText makes severities encode as "error" and "warning".
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Stats counts what was analyzed.
type Stats struct {
	Events      uint64 `json:"events"`
	Allocations uint64 `json:"allocations"`
	Frees       uint64 `json:"frees"`
	Uses        uint64 `json:"uses"`
	Streams     int    `json:"streams"`
	Threads     int    `json:"threads"`
	Skipped     uint64 `json:"skipped"` // Failed or captured calls, not analyzed as uses.
	// UnknownAddressUses counts uses of device addresses that no live
	// recorded allocation covers: never recorded, or in a range a
	// synchronous free gave back to the driver, which allocations the
	// trace does not see may have handed out again (see use-after-free).
	// Not zero means the recording misses an allocation path: races on
	// that memory are not found.
	UnknownAddressUses uint64 `json:"unknown_address_uses"`
	// UnknownAddressFrees counts synchronous frees (cudaFree, cuMemFree,
	// cudaFreeHost, cudaHostUnregister) that CUDA accepted of an address no
	// recorded allocation starts at: the driver validates these, so the
	// address was an allocation's base the trace did not see made (or one
	// made again after a recorded free). Not a finding, like unknown uses.
	UnknownAddressFrees uint64 `json:"unknown_address_frees"`
	// OverlappedAllocations counts recorded allocations made over one still
	// live: the trace missed its free (a call the recorder does not see, a
	// device reset). A later free of the overlapped one is not reported.
	OverlappedAllocations uint64 `json:"overlapped_allocations"`
	// LiveAtExit and LiveBytesAtExit count the stream-ordered allocations
	// (cudaMallocAsync, from a pool, a graph launch's) still live when a
	// complete trace ended, and their bytes: what the leak rule reports
	// with Options.Leaks. cudaMalloc memory is not counted.
	LiveAtExit      uint64 `json:"live_at_exit"`
	LiveBytesAtExit uint64 `json:"live_bytes_at_exit"`
}

// Result is the analysis of one trace.
type Result struct {
	Trace    string
	Findings []*Finding
	Stats    Stats
	// Damage is non-nil when the trace was truncated or corrupt: findings
	// cover the events before the damage only.
	Damage error
	Tables *model.Tables
	// Exports are the process's exports of memory to other processes,
	// in trace order.
	Exports []Export
	// ipcEvents holds the keys of the events the process shared with
	// others (exported or opened), each with whether it recorded it.
	ipcEvents map[uint64]bool
}

// Errors returns how many findings have error severity.
func (r *Result) Errors() int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == SeverityError {
			n++
		}
	}
	return n
}
