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
	// events holds, by handle, the key of each live event shared with
	// other processes (cudaIpcGetEventHandle, cudaIpcOpenEventHandle), and
	// shared every key shared, with whether this process recorded it.
	events map[uint64]uint64
	shared map[uint64]bool
}

type ipcExport struct {
	key uint64
	op  access
}

// interprocess applies an import (a live allocation from here on, made by
// the import call) or an export of memory, or an event shared with other
// processes.
func (c *Checker) interprocess(ev *model.Event, st *hb.Step) {
	switch ev.Op {
	case model.OpPtrImport, model.OpIpcMemOpen:
		// Allocated already, as the op spec says: pool memory is
		// stream-ordered (its importer must free it, with cudaFreeAsync,
		// before the exporter frees it, and one never freed is a leak); a
		// legacy mapping is closed, not freed.
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
	case model.OpIpcEventExport, model.OpIpcEventOpen:
		if c.ipc.events == nil {
			c.ipc.events, c.ipc.shared = map[uint64]uint64{}, map[uint64]bool{}
		}
		c.ipc.events[ev.Event] = ev.Value
		// An exporter may have recorded the event before exporting it.
		c.ipc.shared[ev.Value] = c.ipc.shared[ev.Value] || ev.Op == model.OpIpcEventExport && c.engine.EventRecorded(ev.Event)
	case model.OpEventRecord:
		if key, ok := c.ipc.events[ev.Event]; ok {
			c.ipc.shared[key] = true
		}
	case model.OpEventCreate:
		delete(c.ipc.events, ev.Event) // a new event at a handle an opened one had
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
// It also decides the waits on events shared between processes
// (linkSharedWaits).
func LinkImports(results []*Result) {
	linkSharedWaits(results)
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

// linkSharedWaits keeps a finding of a wait on a never-recorded event that
// the process shared with others only when another trace of results shares
// the event too and no trace records it: a record in any process of the
// tree may have come first (their order is out of the traces' sight), and
// without the other processes' traces nothing says the event was not
// recorded there.
func linkSharedWaits(results []*Result) {
	for _, r := range results {
		kept := r.Findings[:0]
		for _, f := range r.Findings {
			if !f.sharedEvent || sharedUnrecorded(results, r, f.ipcEvent) {
				kept = append(kept, f)
			}
		}
		clear(r.Findings[len(kept):])
		r.Findings = kept
	}
}

// sharedUnrecorded reports whether another result than r shares the event
// of key, and none records it.
func sharedUnrecorded(results []*Result, r *Result, key uint64) bool {
	if key == 0 {
		return false // the recorder could not identify the handle
	}
	known := false
	for _, o := range results {
		recorded, ok := o.ipcEvents[key]
		if recorded {
			return false
		}
		known = known || ok && o != r
	}
	return known
}
