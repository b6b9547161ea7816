package symbolize

import (
	"debug/dwarf"
	"debug/elf"
	"path/filepath"
	"sort"
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
	syms  []symbol // FUNC symbols sorted by address.
	dwarf *dwarf.Data
	lines map[dwarf.Offset][]lineRow // Line tables of the compile units looked at, by unit.
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

	mu      sync.Mutex
	objects map[string]*object // nil value: the file could not be read.
	cache   map[cacheKey]Location
}

// New returns an empty Symbolizer.
func New() *Symbolizer {
	return &Symbolizer{objects: map[string]*object{}, cache: map[cacheKey]Location{}}
}

// Lookup resolves the ELF virtual address addr in the file at path. The
// zero Location means nothing is known.
func (s *Symbolizer) Lookup(path string, addr uint64) Location {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := cacheKey{path, addr}
	if loc, ok := s.cache[k]; ok {
		return loc
	}
	obj, ok := s.objects[path]
	if !ok {
		obj = load(path)
		s.objects[path] = obj
	}
	var loc Location
	if obj != nil {
		loc = obj.lookup(addr)
		if loc.File != "" && s.RelativeTo != "" {
			if rel, err := filepath.Rel(s.RelativeTo, loc.File); err == nil && !strings.HasPrefix(rel, "..") {
				loc.File = rel
			}
		}
	}
	s.cache[k] = loc
	return loc
}

func load(path string) *object {
	f, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	obj := &object{}
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

func (o *object) lookup(addr uint64) Location {
	var loc Location
	i := sort.Search(len(o.syms), func(i int) bool { return o.syms[i].addr > addr }) - 1
	if i >= 0 {
		s := o.syms[i]
		if addr < s.addr+s.size || s.size == 0 {
			loc.Func = demangle.Filter(s.name, demangle.NoParams)
		}
	}
	if o.dwarf == nil {
		return loc
	}
	r := o.dwarf.Reader()
	cu, err := r.SeekPC(addr)
	if err != nil || cu == nil {
		return loc
	}
	rows := o.lineRows(cu)
	// The last row at or below addr holds it, unless it ends a sequence.
	j := sort.Search(len(rows), func(i int) bool { return rows[i].addr > addr }) - 1
	if j >= 0 && !rows[j].end {
		loc.File = rows[j].file
		loc.Line = rows[j].line
	}
	return loc
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

// Frame fills f's function, file and line from the module it belongs to,
// interning the names into t. Frames that already name a file, or whose
// module is unknown, are left alone. Recorded pcs are return addresses, so
// the call instruction is looked up one byte before them.
func (s *Symbolizer) Frame(t *model.Tables, f *model.Frame) {
	if f.File != 0 || f.Module == 0 || f.PC == 0 {
		return
	}
	m := t.Module(f.Module)
	path := t.String(m.Path)
	if path == "" || f.PC <= m.Base {
		return
	}
	loc := s.Lookup(path, f.PC-m.Base-1)
	if loc.Func != "" && f.Func == 0 {
		f.Func = t.Intern(loc.Func)
	}
	if loc.File != "" {
		f.File = t.Intern(loc.File)
		f.Line = uint32(loc.Line)
	}
}

// Stack symbolizes every frame of a stack in place.
func (s *Symbolizer) Stack(t *model.Tables, id model.StackID) {
	frames := t.Stack(id)
	for i := range frames {
		s.Frame(t, &frames[i])
	}
}
