package shimbuild

import (
	"debug/elf"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNoGoRuntime builds the shim and checks that it is a C library: it
// exports InitializeInjection and the NCCL wrappers, needs only the C runtime's
// libraries, and holds none of a Go binary's symbols or sections.
func TestNoGoRuntime(t *testing.T) {
	if m := Missing(); m != "" {
		t.Skip(m)
	}
	out := filepath.Join(t.TempDir(), "libstreamcheck.so")
	if err := Build(out); err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Type != elf.ET_DYN {
		t.Errorf("ELF type %v, want a shared object", f.Type)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	var exported []string
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF {
			exported = append(exported, s.Name)
		}
	}
	// InitializeInjection, and the wrappers of NCCL's functions
	// (intercept/nccl.c) with their lookup.
	slices.Sort(exported)
	want := []string{"InitializeInjection", "ncclAllGather", "ncclAllReduce", "ncclAlltoAll", "ncclBcast", "ncclBroadcast",
		"ncclCommAbort", "ncclCommDestroy", "ncclGather", "ncclGroupEnd", "ncclGroupStart", "ncclMemAlloc", "ncclMemFree",
		"ncclRecv", "ncclReduce", "ncclReduceScatter", "ncclScatter", "ncclSend", "sc_nccl_lookup"}
	if !slices.Equal(exported, want) {
		t.Errorf("exports %q, want %q", exported, want)
	}
	all, err := f.Symbols() // the static symbols (-g keeps them)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(all, syms...) {
		if n := s.Name; strings.HasPrefix(n, "runtime.") || strings.HasPrefix(n, "_cgo_") ||
			strings.HasPrefix(n, "x_cgo_") || strings.HasPrefix(n, "crosscall") || strings.HasPrefix(n, "go:") {
			t.Errorf("Go runtime symbol %q", n)
		}
	}
	for _, name := range []string{".gopclntab", ".go.buildinfo", ".gosymtab", ".note.go.buildid"} {
		if f.Section(name) != nil {
			t.Errorf("Go section %s", name)
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range libs {
		if !strings.HasPrefix(l, "libc.so") && !strings.HasPrefix(l, "libgcc_s.so") &&
			!strings.HasPrefix(l, "libdl.so") && !strings.HasPrefix(l, "libpthread.so") {
			t.Errorf("needs %s", l)
		}
	}
}
