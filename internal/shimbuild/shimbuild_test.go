package shimbuild

import (
	"debug/elf"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestNoGoRuntime builds the shim and checks that it is a C library: it
// exports InitializeInjection and the interposition backend's entry points
// (wantExports) and the NCCL wrappers with their lookup, and nothing
// else, needs only the C runtime's libraries, and
// holds none of a Go binary's symbols or sections.
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
	want := wantExports(t)
	slices.Sort(exported)
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

// wantExports returns what the shim exports, sorted: InitializeInjection,
// dlsym, cuGetProcAddress and cuGetProcAddress_v2, and each driver
// function of intercept/drvcalls.h, with its _ptsz or _ptds variant where
// the row has one.
func wantExports(t *testing.T) []string {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(root, "intercept", "drvcalls.h"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"InitializeInjection", "dlsym", "cuGetProcAddress", "cuGetProcAddress_v2",
		// Forwarded only to know that a direct caller came through the shim.
		"cuInit",
		// NCCL's functions (intercept/nccl.c) and their lookup.
		"ncclAllGather", "ncclAllReduce", "ncclAlltoAll", "ncclBcast", "ncclBroadcast", "ncclCommAbort",
		"ncclCommDestroy", "ncclGather", "ncclGroupEnd", "ncclGroupStart", "ncclMemAlloc", "ncclMemFree",
		"ncclRecv", "ncclReduce", "ncclReduceScatter", "ncclScatter", "ncclSend", "sc_nccl_lookup"}
	rows := regexp.MustCompile(`(?m)^\s+X0?\((cu\w+), \w+, [^,]+, [^,]+, (PT_\w+),`).FindAllStringSubmatch(string(src), -1)
	if len(rows) < 100 {
		t.Fatalf("drvcalls.h: %d rows read", len(rows))
	}
	for _, r := range rows {
		want = append(want, r[1])
		switch r[2] {
		case "PT_SZ":
			want = append(want, r[1]+"_ptsz")
		case "PT_DS":
			want = append(want, r[1]+"_ptds")
		}
	}
	slices.Sort(want)
	return want
}
