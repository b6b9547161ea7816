package symbolize

import (
	"debug/elf"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/model"
)

// build compiles src with the system compiler, skipping the test without one.
func build(t *testing.T, compiler, src string, flags ...string) string {
	t.Helper()
	if _, err := exec.LookPath(compiler); err != nil {
		t.Skipf("%s not found", compiler)
	}
	out := filepath.Join(t.TempDir(), "prog")
	args := append(append([]string{}, flags...), "-o", out, src)
	if b, err := exec.Command(compiler, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", compiler, err, b)
	}
	return out
}

func symbolAddr(t *testing.T, path, name string) uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name {
			return s.Value
		}
	}
	t.Fatalf("%s: no symbol %s", path, name)
	return 0
}

func TestLookupWithDebugInfo(t *testing.T) {
	bin := build(t, "cc", "testdata/prog.c", "-g", "-O0")
	addr := symbolAddr(t, bin, "target")
	s := New()
	loc := s.Lookup(bin, addr)
	if loc.Func != "target" || filepath.Base(loc.File) != "prog.c" || loc.Line != 2 {
		t.Errorf("Lookup(target) = %+v, want target prog.c:2", loc)
	}
}

func TestLookupWithoutDebugInfo(t *testing.T) {
	bin := build(t, "cc", "testdata/prog.c", "-O0")
	loc := New().Lookup(bin, symbolAddr(t, bin, "target")+1)
	if loc.Func != "target" || loc.File != "" {
		t.Errorf("Lookup = %+v, want function name only", loc)
	}
}

func TestDemangles(t *testing.T) {
	bin := build(t, "c++", "testdata/prog.cc", "-g", "-O0")
	loc := New().Lookup(bin, symbolAddr(t, bin, "_ZN3app5scaleEi"))
	if loc.Func != "app::scale" {
		t.Errorf("Func = %q, want app::scale", loc.Func)
	}
}

func TestMissingFile(t *testing.T) {
	if loc := New().Lookup("/nonexistent/binary", 0x1000); loc != (Location{}) {
		t.Errorf("Lookup on a missing file = %+v, want zero", loc)
	}
}

func TestStackRelativeAndInterned(t *testing.T) {
	// Compiled from an absolute path, so DWARF holds the absolute file name.
	abs, _ := filepath.Abs("testdata/prog.c")
	bin2 := build(t, "cc", abs, "-g", "-O0")
	tables := model.NewTables()
	const bias = 0x400000
	size, err := ModuleSize(bin2)
	if err != nil {
		t.Fatal(err)
	}
	tables.Modules = append(tables.Modules, model.Module{ID: 1, Base: bias, Size: size, Path: tables.Intern(bin2)})
	// A return address just after the function's first instruction.
	tables.Stacks = append(tables.Stacks, []model.Frame{{PC: bias + symbolAddr(t, bin2, "target") + 1, Module: 1}})
	s := New()
	s.RelativeTo, _ = filepath.Abs(".")
	s.Stack(tables, 1)
	f := tables.Stack(1)[0]
	if got := tables.String(f.File); got != "testdata/prog.c" || f.Line != 2 || tables.String(f.Func) != "target" {
		t.Errorf("frame = %s %s:%d, want target testdata/prog.c:2", tables.String(f.Func), got, f.Line)
	}
}

// TestOtherBuildLeftUnresolved: a module whose file now has another size
// than the trace recorded (a library updated since, another machine's
// build) is not used, so frames stay unresolved rather than named wrong.
func TestOtherBuildLeftUnresolved(t *testing.T) {
	bin := build(t, "cc", "testdata/prog.c", "-g", "-O0")
	size, err := ModuleSize(bin)
	if err != nil {
		t.Fatal(err)
	}
	tables := model.NewTables()
	const bias = 0x400000
	tables.Modules = append(tables.Modules, model.Module{ID: 1, Base: bias, Size: size + 0x1000, Path: tables.Intern(bin)})
	tables.Stacks = append(tables.Stacks, []model.Frame{{PC: bias + symbolAddr(t, bin, "target") + 1, Module: 1}})
	New().Stack(tables, 1)
	if f := tables.Stack(1)[0]; f.Func != 0 || f.File != 0 {
		t.Errorf("frame resolved in a file of another size: %s %s:%d", tables.String(f.Func), tables.String(f.File), f.Line)
	}
}

func TestLookupMainInSecondSequence(t *testing.T) {
	bin := build(t, "cc", "testdata/startup.c", "-g", "-O2")
	loc := New().Lookup(bin, symbolAddr(t, bin, "main")+4)
	if loc.Func != "main" || filepath.Base(loc.File) != "startup.c" || loc.Line < 4 || loc.Line > 7 {
		t.Errorf("Lookup(main+4) = %+v, want main in startup.c lines 4-7", loc)
	}
}

func TestInlinedChain(t *testing.T) {
	bin := build(t, "c++", "testdata/inlined.cc", "-g", "-O2")
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	var ra, sinkAt uint64
	if _, err := fmt.Sscanf(string(out), "0x%x 0x%x", &ra, &sinkAt); err != nil {
		t.Fatalf("program printed %q: %v", out, err)
	}
	// The load bias is where sink is minus where the ELF file says it is.
	bias := sinkAt - symbolAddr(t, bin, "_Z4sinkv")
	chain := New().Inlined(bin, ra-bias-1)
	if len(chain) != 2 {
		t.Fatalf("chain = %+v, want the helper then main", chain)
	}
	// A static inline function has no linkage name, so it may come back
	// unqualified.
	if !strings.HasSuffix(chain[0].Func, "helper") || filepath.Base(chain[0].File) != "inlined.cc" || chain[0].Line != 11 {
		t.Errorf("inner = %+v, want helper inlined.cc:11", chain[0])
	}
	if chain[1].Func != "main" || filepath.Base(chain[1].File) != "inlined.cc" || chain[1].Line != 16 {
		t.Errorf("outer = %+v, want main inlined.cc:16", chain[1])
	}
}
