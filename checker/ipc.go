package checker

import (
	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// ipcState keeps what a process shared with others: the keys of the
// memory it imported, by the import's seq, and its exports, for reports
// that name both processes (LinkImports).
//
// Nothing here orders anything: the exporter's allocation, the importer's
// uses and the two processes' frees are ordered by IPC events and by host
// means (sockets, barriers) the traces cannot see, so no finding is made
// across processes. Within the importing process an imported pointer is
// an allocation like any other.
type ipcState struct {
	imports map[uint64]uint64 // import seq -> key
	exports []ipcExport
}

type ipcExport struct {
	key uint64
	op  access
}

// interprocess applies an import (a live allocation from here on, made by
// the import call) or an export of memory.
func (c *Checker) interprocess(ev *model.Event, st *hb.Step) {
	switch ev.Op {
	case model.OpPtrImport, model.OpIpcMemOpen:
		// Pool memory is stream-ordered: its importer must free it (with
		// cudaFreeAsync, before the exporter frees it), and one never
		// freed is a leak. A legacy mapping is closed, not freed.
		c.allocate(ev, st, ev.Ptr, ev.Size, ev.Op == model.OpPtrImport)
		if ev.Ptr != 0 && ev.Value != 0 {
			if c.ipc.imports == nil {
				c.ipc.imports = map[uint64]uint64{}
			}
			c.ipc.imports[ev.Seq] = ev.Value
		}
	case model.OpPtrExport, model.OpIpcMemExport:
		if ev.Value != 0 {
			c.ipc.exports = append(c.ipc.exports, ipcExport{key: ev.Value, op: c.accessOf(ev, st, ev.Ptr)})
		}
	}
}

// importOf returns where the allocation made by a came from, or nil if a
// is not an import.
func (c *Checker) importOf(a *access) *Import {
	if a.op != model.OpPtrImport && a.op != model.OpIpcMemOpen {
		return nil
	}
	key, ok := c.ipc.imports[a.seq]
	if !ok {
		return nil
	}
	return &Import{Key: key}
}

// resolveExports returns the process's exports, resolved for reports.
func (c *Checker) resolveExports() []Export {
	var out []Export
	for i := range c.ipc.exports {
		x := &c.ipc.exports[i]
		out = append(out, Export{Key: x.key, Op: c.resolve("export", &x.op)})
	}
	return out
}

// LinkImports names, in each finding about imported memory, the process
// that exported it and its export call, when that process's trace is among
// results (the traces of one process tree). Only an export in another
// trace counts, and only one: a key exported by two others names neither.
func LinkImports(results []*Result) {
	type export struct {
		r  *Result
		op *Op
	}
	byKey := map[uint64][]export{}
	for _, r := range results {
		for i := range r.Exports {
			x := &r.Exports[i]
			byKey[x.Key] = append(byKey[x.Key], export{r, &x.Op})
		}
	}
	for _, r := range results {
		for _, f := range r.Findings {
			if f.Alloc == nil || f.Alloc.Import == nil {
				continue
			}
			var from *export
			n := 0
			for i, x := range byKey[f.Alloc.Import.Key] {
				if x.r != r {
					from = &byKey[f.Alloc.Import.Key][i]
					n++
				}
			}
			if n != 1 {
				continue
			}
			op := *from.op
			f.Alloc.Import.PID, f.Alloc.Import.Export = pidOf(from.r), &op
		}
	}
}

func pidOf(r *Result) uint32 {
	if r.Tables == nil {
		return 0
	}
	return r.Tables.Process.PID
}
