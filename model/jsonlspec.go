package model

import (
	"strconv"
	"strings"
)

// Field sets of the JSON Lines form: which op-specific fields a line of each
// op carries (docs/trace-format.md, "JSON Lines"), besides the keys of the
// op's flags (flagSpecs). The reader and the writer share the op spec
// (opspec.go), so they cannot disagree.
type jsonFields uint32

const (
	jStream    jsonFields = 1 << iota // "stream"
	jEvent                            // "event"
	jPtr                              // "ptr" (Event.Ptr)
	jDst                              // "dst" (Event.Ptr of a copy)
	jSrc                              // "src"
	jSize                             // "size"
	jKind                             // "kind"
	jPool                             // "pool"
	jKernel                           // "kernel", "ptrs", "weak_ptrs"
	jPriority                         // "priority" (stream_create)
	jResult                           // "result" is required
	jGraphName                        // "graph": a graph's name (capture_begin, capture_end, graph_instantiate, graph_forget, graph_event_*_node, graph_clone)
	jExec                             // "exec": the executable graph's name
	jNode                             // "node": a graph node's name (graph_event_*_node, graph_forget, graph_clone)
	jFrom                             // "from": the name of the graph a graph_clone copies, or a graph_forget's new child graph (Event.Src)
	jMemOp                            // "mem_op", "mem_flags", "value" (stream_mem_op)
	jValue                            // "value" alone: the key of interprocess data (ptr_export, ptr_import, ipc_*), a pool attribute's value, a trim's bytes
	jFamily                           // "kind": a malloc's allocation family, or the family a free releases (Event.Family)
	jPitch                            // "pitch", "height" (a pitched malloc)
	jAttr                             // "attr": the pool attribute a pool_set_attr sets
	jColl                             // "src_size", "nranks" (collective)
)

// has reports whether a line of the op may carry any of fields.
func (s *OpSpec) has(fields jsonFields) bool { return (s.required|s.optional)&fields != 0 }

// hasFlag reports whether the op may carry any of the flags.
func (s *OpSpec) hasFlag(flags uint32) bool { return s.Flags&flags != 0 }

// defaultAPI is the API name a JSON Lines line of ev gets when it has no
// "api".
func defaultAPI(ev *Event) string {
	s := &opSpecs[ev.Op]
	if s.apiOf != nil {
		if api := s.apiOf(ev); api != "" {
			return api
		}
	}
	return s.API
}

// mallocAPI is the API of a malloc_async from a pool.
func mallocAPI(ev *Event) string {
	if ev.Pool != 0 {
		return "cudaMallocFromPoolAsync"
	}
	return ""
}

// familyAPI is the API of a malloc or free of ev.Family.
func familyAPI(ev *Event) string {
	if ev.Op == OpFree {
		switch ev.Family {
		case FamilyHost:
			return "cudaFreeHost"
		case FamilyRegistered:
			return "cudaHostUnregister"
		}
		return ""
	}
	switch ev.Family {
	case FamilyPitched:
		return "cudaMallocPitch"
	case FamilyManaged:
		return "cudaMallocManaged"
	case FamilyHost:
		return "cudaMallocHost"
	case FamilyRegistered:
		return "cudaHostRegister"
	case FamilyModule:
		return "cuModuleGetGlobal"
	}
	return ""
}

// memOpAPI is the API of a stream_mem_op that does what ev.MemOp says.
func memOpAPI(ev *Event) string {
	switch ev.MemOp {
	case MemOpWait64:
		return "cuStreamWaitValue64"
	case MemOpWrite32:
		return "cuStreamWriteValue32"
	case MemOpWrite64:
		return "cuStreamWriteValue64"
	case MemOpFlush, MemOpBarrier, MemOpAtomic:
		return "cuStreamBatchMemOp"
	}
	return ""
}

// defaultPageable: a copy of an op whose host side is pageable by default
// (a synchronous copy) is assumed to use pageable memory when it has a host
// side, unless the line says otherwise.
func defaultPageable(op Op, kind MemcpyKind, pinned bool) bool {
	return opSpecs[op].pageable && !pinned && (kind == CopyH2D || kind == CopyD2H || kind == CopyH2H)
}

// Result names accepted in "result". The first name listed for a code is
// the one the writer uses.
var resultNames = []struct {
	name string
	code int32
}{
	{"success", ResultSuccess},
	{"not_ready", ResultNotReady},
	{"cudaSuccess", ResultSuccess},
	{"cudaErrorNotReady", ResultNotReady},
	{"cudaErrorInvalidValue", 1},
	{"cudaErrorMemoryAllocation", 2},
	{"cudaErrorInitializationError", 3},
	{"cudaErrorCudartUnloading", 4},
	{"cudaErrorInvalidConfiguration", 9},
	{"cudaErrorInvalidDevicePointer", 17},
	{"cudaErrorInvalidMemcpyDirection", 21},
	{"cudaErrorNoDevice", 100},
	{"cudaErrorInvalidDevice", 101},
	{"cudaErrorInvalidResourceHandle", 400},
	{"cudaErrorIllegalAddress", 700},
	{"cudaErrorLaunchFailure", 719},
	{"cudaErrorNotSupported", 801},
	{"cudaErrorStreamCaptureUnsupported", 900},
	{"cudaErrorStreamCaptureInvalidated", ResultCaptureInvalidated},
	{"cudaErrorStreamCaptureMerge", 902},
	{"cudaErrorStreamCaptureUnmatched", 903},
	{"cudaErrorStreamCaptureUnjoined", ResultCaptureUnjoined},
	{"cudaErrorStreamCaptureIsolation", 905},
	{"cudaErrorStreamCaptureImplicit", 906},
	{"cudaErrorCapturedEvent", 907},
	{"cudaErrorStreamCaptureWrongThread", ResultCaptureWrongThread},
	{"cudaErrorUnknown", resultUnknown},
}

// resultUnknown (cudaErrorUnknown) stands for error names this table lacks.
const resultUnknown int32 = 999

// parseResultName reads a result given as a string. An error name this
// table lacks reads as resultUnknown; any other word is refused, since a
// misspelt "success" would otherwise make the call a failed one, which the
// checker skips without a word.
func parseResultName(s string) (int32, error) {
	for _, r := range resultNames {
		if r.name == s {
			return r.code, nil
		}
	}
	if n, err := strconv.ParseInt(s, 10, 32); err == nil {
		return int32(n), nil
	}
	if s == "error" || strings.HasPrefix(s, "cudaError") || strings.HasPrefix(s, "CUDA_ERROR_") {
		return resultUnknown, nil
	}
	return 0, corruptf("unknown result %q: want \"success\", \"not_ready\", a cudaError name, or an error code", s)
}

func resultName(code int32) (string, bool) {
	for _, r := range resultNames {
		if r.code == code {
			return r.name, true
		}
	}
	return "", false
}

// Reserved stream names of the JSON Lines form.
const (
	streamNameLegacy    = "legacy"
	streamNamePerThread = "per_thread"
)

// poolNameDefault names the device's default pool (handle 0).
const poolNameDefault = "default"

func reservedStream(name string) (uint64, bool) {
	switch name {
	case streamNameLegacy, "0":
		return StreamLegacy, true
	case streamNamePerThread:
		return StreamPerThread, true
	}
	return 0, false
}

// parseFrame reads one stack frame written as a string: "0x<pc>",
// "file:line", "func file:line" or any other text (a function name).
// (A frame whose module is known is written as an object: see jsonFrame.)
func parseFrame(t *Tables, text string) Frame {
	text = strings.TrimSpace(text)
	if pc, ok := parseHex(text); ok {
		return Frame{PC: pc}
	}
	if file, line, ok := parseFileLine(text); ok {
		return Frame{File: t.Intern(file), Line: line}
	}
	if sp := strings.LastIndexByte(text, ' '); sp > 0 {
		if file, line, ok := parseFileLine(text[sp+1:]); ok {
			fn := strings.TrimSpace(text[:sp])
			return Frame{Func: t.Intern(fn), File: t.Intern(file), Line: line}
		}
	}
	return Frame{Func: t.Intern(text)}
}

// parseFileLine splits "file:line" with a non-empty file and no spaces.
func parseFileLine(s string) (string, uint32, bool) {
	c := strings.LastIndexByte(s, ':')
	if c <= 0 || strings.IndexByte(s, ' ') >= 0 {
		return "", 0, false
	}
	line, err := strconv.ParseUint(s[c+1:], 10, 32)
	if err != nil {
		return "", 0, false
	}
	return s[:c], uint32(line), true
}

// parseHex reads "0x" followed by 1 to 16 hex digits.
func parseHex(s string) (uint64, bool) {
	if len(s) < 3 || s[0] != '0' || s[1] != 'x' {
		return 0, false
	}
	v, err := strconv.ParseUint(s[2:], 16, 64)
	return v, err == nil
}

// needsObject reports whether f is written as an object
// (appendFrameObject): when a string would lose its module, the pc of a
// frame with a name, or a line without a file (the shim gives a Python
// frame its line before it is symbolized).
func needsObject(t *Tables, f Frame) bool {
	return (f.Module != 0 && t.Module(f.Module).Path != 0) || (f.PC != 0 && (f.Func != 0 || f.File != 0)) ||
		(f.Line != 0 && f.File == 0)
}

// appendFrameObject writes f as the object jsonFrame reads back.
func appendFrameObject(b []byte, t *Tables, f Frame) []byte {
	m := t.Module(f.Module)
	b = append(b, '{')
	sep := func() {
		if b[len(b)-1] != '{' {
			b = append(b, ',')
		}
	}
	if f.PC != 0 {
		b = appendHex(append(b, `"pc":`...), f.PC)
	}
	if fn := t.String(f.Func); fn != "" {
		sep()
		b = appendJSONString(append(b, `"func":`...), fn)
	}
	if file := t.String(f.File); file != "" {
		sep()
		b = appendJSONString(append(b, `"file":`...), file)
	}
	if f.File != 0 || f.Line != 0 {
		sep()
		b = strconv.AppendUint(append(b, `"line":`...), uint64(f.Line), 10)
	}
	if f.Module == 0 || m.Path == 0 {
		return append(b, '}')
	}
	sep()
	b = appendJSONString(append(b, `"module":`...), t.String(m.Path))
	if m.Base != 0 {
		b = appendHex(append(b, `,"base":`...), m.Base)
	}
	if m.Size != 0 {
		b = strconv.AppendUint(append(b, `,"size":`...), m.Size, 10)
	}
	return append(b, '}')
}

// appendFrame writes f as a string, in the form parseFrame reads back.
func appendFrame(b []byte, t *Tables, f Frame) []byte {
	fn, file := t.String(f.Func), t.String(f.File)
	switch {
	case file != "" && fn != "":
		b = append(b, fn...)
		b = append(b, ' ')
		fallthrough
	case file != "":
		b = append(b, file...)
		b = append(b, ':')
		return strconv.AppendUint(b, uint64(f.Line), 10)
	case fn != "":
		return append(b, fn...)
	}
	b = append(b, "0x"...)
	return strconv.AppendUint(b, f.PC, 16)
}
