package symbolize

import (
	"debug/dwarf"
	"debug/elf"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/ianlancetaylor/demangle"

	"github.com/streamcheck/streamcheck/model"
)

// Location is what one address resolves to.
type Location struct {
	Func string
	File string
	Line int
}

type symbol struct {
	addr, size uint64
	name       string
}

// object is one ELF file, opened on first use.
type object struct {
	extent uint64   // End of the highest PT_LOAD segment, as the Module record's size.
	syms   []symbol // FUNC symbols sorted by address.
	dwarf  *dwarf.Data
	lines  map[dwarf.Offset][]lineRow // Line tables of the compile units looked at, by unit.
}

// lineRow is one row of a line table: the instructions from addr up to the
// next row's address come from file:line. An end row closes a sequence.
type lineRow struct {
	addr uint64
	file string
	line int
	end  bool
}

type cacheKey struct {
	path string
	addr uint64
}

// Symbolizer resolves addresses in ELF files. It caches files and answers;
// it is safe for concurrent use.
type Symbolizer struct {
	// RelativeTo, if set, makes source paths under it relative to it, so
	// reports name files the way the project does ("src/app.cu").
	RelativeTo string
	// PerfMapDir, if set, is where Python processes wrote their perf maps
	// (see perfmap.go): "/tmp" on the machine that ran them.
	PerfMapDir string
	// PerfMapsRead lists the perf maps Rewrite used, for a caller that
	// owns them to remove.
	PerfMapsRead []string

	mu      sync.Mutex
	objects map[string]*object // nil value: the file could not be read.
	cache   map[cacheKey][]Location
}

// New returns an empty Symbolizer.
func New() *Symbolizer {
	return &Symbolizer{objects: map[string]*object{}, cache: map[cacheKey][]Location{}}
}

// Lookup resolves the ELF virtual address addr in the file at path. The
// zero Location means nothing is known. Where code was inlined, Lookup
// answers with the innermost function; Inlined gives the whole chain.
func (s *Symbolizer) Lookup(path string, addr uint64) Location {
	if chain := s.Inlined(path, addr); len(chain) > 0 {
		return chain[0]
	}
	return Location{}
}

// Inlined resolves addr to the chain of functions it is in, innermost
// first: the function whose code is at addr, then, for each level of
// inlining, the function it was inlined into with the line of the call.
// Without inlining the chain has one entry; nil means nothing is known.
func (s *Symbolizer) Inlined(path string, addr uint64) []Location {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := cacheKey{path, addr}
	if chain, ok := s.cache[k]; ok {
		return chain
	}
	obj := s.object(path)
	var chain []Location
	if obj != nil {
		chain = obj.lookup(addr)
		for i := range chain {
			chain[i].File = s.relative(chain[i].File)
		}
	}
	s.cache[k] = chain
	return chain
}

// relative makes a source path under RelativeTo relative to it.
func (s *Symbolizer) relative(file string) string {
	if file == "" || s.RelativeTo == "" {
		return file
	}
	if rel, err := filepath.Rel(s.RelativeTo, file); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return file
}

// object returns the file at path, read once; nil if it cannot be. Call
// with s.mu held.
func (s *Symbolizer) object(path string) *object {
	obj, ok := s.objects[path]
	if !ok {
		obj = load(path)
		s.objects[path] = obj
	}
	return obj
}

// modulePath returns the file a module's recorded path names, if it is the
// recorded module: the path as recorded, or, for one whose control
// characters the trace reader escaped (model.Printable), as it was.
func (s *Symbolizer) modulePath(recorded string, size uint64) string {
	if recorded == "" {
		return ""
	}
	if s.sameFile(recorded, size) {
		return recorded
	}
	if strings.ContainsRune(recorded, '\\') {
		if orig, err := strconv.Unquote(`"` + recorded + `"`); err == nil && s.sameFile(orig, size) {
			return orig
		}
	}
	return ""
}

// sameFile reports whether the file now at path can be the one a trace
// recorded there with the given size (the Module record's): a library
// updated since, or another machine's build, would name the wrong
// functions. A size of 0 (not recorded) is taken on trust.
func (s *Symbolizer) sameFile(path string, size uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj := s.object(path)
	return obj != nil && (size == 0 || obj.extent == size)
}

// ModuleSize returns the size a Module record gives the ELF file at path:
// the end of its highest PT_LOAD segment. Frames are resolved in a file
// only when its size is the recorded one.
func ModuleSize(path string) (uint64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return loadExtent(f), nil
}

func loadExtent(f *elf.File) uint64 {
	var end uint64
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			end = max(end, p.Vaddr+p.Memsz)
		}
	}
	return end
}

func load(path string) *object {
	f, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	obj := &object{extent: loadExtent(f)}
	for _, read := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, err := read()
		if err != nil {
			continue
		}
		for _, sym := range syms {
			if elf.ST_TYPE(sym.Info) == elf.STT_FUNC && sym.Value != 0 {
				obj.syms = append(obj.syms, symbol{sym.Value, sym.Size, sym.Name})
			}
		}
	}
	sort.Slice(obj.syms, func(i, j int) bool { return obj.syms[i].addr < obj.syms[j].addr })
	if d, err := f.DWARF(); err == nil {
		obj.dwarf = d
	}
	return obj
}

func (o *object) lookup(addr uint64) []Location {
	var loc Location
	i := sort.Search(len(o.syms), func(i int) bool { return o.syms[i].addr > addr }) - 1
	if i >= 0 {
		s := o.syms[i]
		if addr < s.addr+s.size || s.size == 0 {
			loc.Func = demangle.Filter(s.name, demangle.NoParams)
		}
	}
	if o.dwarf == nil {
		return nonEmpty(loc)
	}
	r := o.dwarf.Reader()
	cu, err := r.SeekPC(addr)
	if err != nil || cu == nil {
		return nonEmpty(loc)
	}
	rows := o.lineRows(cu)
	// The last row at or below addr holds it, unless it ends a sequence.
	j := sort.Search(len(rows), func(i int) bool { return rows[i].addr > addr }) - 1
	if j >= 0 && !rows[j].end {
		loc.File = rows[j].file
		loc.Line = rows[j].line
	}
	scopes := o.scopes(r, addr)
	if len(scopes) == 0 {
		return nonEmpty(loc)
	}
	// scopes[0] is the function, scopes[1:] the inlined calls, outermost
	// first. The line table gives the innermost location; each inlined call
	// records where it was called from in the scope around it.
	files := o.files(cu)
	if name := o.name(scopes[len(scopes)-1]); name != "" {
		loc.Func = name
	}
	chain := []Location{loc}
	for k := len(scopes) - 1; k >= 1; k-- {
		call := scopes[k]
		caller := Location{Func: o.name(scopes[k-1])}
		if idx, ok := call.Val(dwarf.AttrCallFile).(int64); ok && idx >= 0 && int(idx) < len(files) && files[idx] != nil {
			caller.File = files[idx].Name
		}
		if line, ok := call.Val(dwarf.AttrCallLine).(int64); ok {
			caller.Line = int(line)
		}
		chain = append(chain, caller)
	}
	return chain
}

func nonEmpty(loc Location) []Location {
	if loc == (Location{}) {
		return nil
	}
	return []Location{loc}
}

// scopes reads the children of the compile unit r was just positioned in
// and returns the function holding addr and the inlined calls inside it
// that hold addr, outermost first.
func (o *object) scopes(r *dwarf.Reader, addr uint64) []*dwarf.Entry {
	var chain []*dwarf.Entry
	for {
		e, err := r.Next()
		if err != nil || e == nil || e.Tag == 0 {
			return chain // End of this level's entries.
		}
		switch e.Tag {
		case dwarf.TagSubprogram, dwarf.TagInlinedSubroutine, dwarf.TagLexDwarfBlock:
			if o.holds(e, addr) {
				if e.Tag != dwarf.TagLexDwarfBlock {
					chain = append(chain, e)
				}
				if !e.Children {
					return chain
				}
				// Siblings cannot hold addr too: look only inside.
				return append(chain, o.scopes(r, addr)...)
			}
		}
		if e.Children {
			r.SkipChildren()
		}
	}
}

func (o *object) holds(e *dwarf.Entry, addr uint64) bool {
	ranges, err := o.dwarf.Ranges(e)
	if err != nil {
		return false
	}
	for _, rg := range ranges {
		if addr >= rg[0] && addr < rg[1] {
			return true
		}
	}
	return false
}

// name returns a function's name, qualified and demangled where the
// linkage name allows ("sc::launch_spin"), following the references from
// inlined and out-of-line copies to the declaration that holds it.
func (o *object) name(e *dwarf.Entry) string {
	for range 4 { // Origins and specifications chain a few levels at most.
		for _, attr := range []dwarf.Attr{dwarf.AttrLinkageName, 0x2007 /* DW_AT_MIPS_linkage_name, older gcc */} {
			if ln, ok := e.Val(attr).(string); ok && ln != "" {
				return demangle.Filter(ln, demangle.NoParams)
			}
		}
		if n, ok := e.Val(dwarf.AttrName).(string); ok && n != "" {
			return n
		}
		off, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if !ok {
			if off, ok = e.Val(dwarf.AttrSpecification).(dwarf.Offset); !ok {
				return ""
			}
		}
		r := o.dwarf.Reader()
		r.Seek(off)
		next, err := r.Next()
		if err != nil || next == nil {
			return ""
		}
		e = next
	}
	return ""
}

// files returns the file table of a compile unit's line program, indexed as
// DW_AT_call_file values index it.
func (o *object) files(cu *dwarf.Entry) []*dwarf.LineFile {
	lr, err := o.dwarf.LineReader(cu)
	if err != nil || lr == nil {
		return nil
	}
	return lr.Files()
}

// lineRows returns a compile unit's line table sorted by address. It reads
// the table itself rather than using LineReader.SeekPC, which misses code in
// a second sequence (gcc -O2 puts main in .text.startup, and such a unit's
// sequences are not in address order).
func (o *object) lineRows(cu *dwarf.Entry) []lineRow {
	if rows, ok := o.lines[cu.Offset]; ok {
		return rows
	}
	var rows []lineRow
	if lr, err := o.dwarf.LineReader(cu); err == nil && lr != nil {
		var le dwarf.LineEntry
		for lr.Next(&le) == nil {
			row := lineRow{addr: le.Address, line: le.Line, end: le.EndSequence}
			if le.File != nil {
				row.file = le.File.Name
			}
			rows = append(rows, row)
		}
	}
	// At one address, a sequence's end row goes before the row that starts
	// the next sequence there, so the search below lands on the start.
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].addr != rows[j].addr {
			return rows[i].addr < rows[j].addr
		}
		return rows[i].end && !rows[j].end
	})
	if o.lines == nil {
		o.lines = map[dwarf.Offset][]lineRow{}
	}
	o.lines[cu.Offset] = rows
	return rows
}

// frames resolves f to its chain of frames, innermost first, with names
// interned into t; nil when f is already resolved or cannot be. Recorded
// pcs are return addresses, so the call instruction is looked up one byte
// before them.
func (s *Symbolizer) frames(t *model.Tables, f model.Frame) []model.Frame {
	if f.File != 0 || f.Module == 0 || f.PC == 0 {
		return nil
	}
	m := t.Module(f.Module)
	// A module known by its path only (named by a JSON Lines frame, with
	// neither load address nor size) cannot place a pc in its file. (A
	// non-PIE executable is loaded at bias 0, but has its size.)
	if (m.Base == 0 && m.Size == 0) || f.PC <= m.Base {
		return nil
	}
	path := s.modulePath(t.String(m.Path), m.Size)
	if path == "" {
		return nil
	}
	chain := s.Inlined(path, f.PC-m.Base-1)
	if len(chain) == 0 {
		return nil
	}
	out := make([]model.Frame, len(chain))
	for i, loc := range chain {
		out[i] = f
		if loc.Func != "" && (f.Func == 0 || i > 0) {
			out[i].Func = t.Intern(loc.Func)
		}
		if loc.File != "" {
			out[i].File = t.Intern(loc.File)
			out[i].Line = uint32(loc.Line)
		}
	}
	return out
}

// Stack symbolizes a stack of t in place, expanding each pc into the
// functions inlined there, so a call made from an inlined helper also shows
// the line that called the helper.
func (s *Symbolizer) Stack(t *model.Tables, id model.StackID) {
	s.stack(t, id, nil)
}

// stack is Stack, resolving pcs outside the loaded files through a perf map.
func (s *Symbolizer) stack(t *model.Tables, id model.StackID, jit perfMap) {
	if int(id) >= len(t.Stacks) {
		return
	}
	var out []model.Frame
	changed := false
	for _, f := range t.Stacks[id] {
		if f.Module == 0 && f.File == 0 && f.PC != 0 && jit != nil {
			if py, ok := s.pythonFrame(t, jit, f); ok {
				out = append(out, py)
				changed = true
				continue
			}
		}
		if chain := s.frames(t, f); chain != nil {
			out = append(out, chain...)
			changed = true
		} else {
			out = append(out, f)
		}
	}
	if changed {
		t.Stacks[id] = out
	}
}
