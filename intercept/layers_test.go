package intercept

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/internal/shimbuild"
)

// The shim's layers point one way: each file calls only the layers below
// it. Each set here links into a library of its own with the shim's flags,
// whose -z defs fails on any symbol the set uses and does not define: the
// writer alone, then the definition tables over it. A call from the writer
// up into a module (a replay, a fork handler, a stream decision) fails it.
var layerSets = [][]string{
	{"tracefile.c"},
	{"tracefile.c", "tables.c"},
	{"tracefile.c", "tables.c", "modules.c"},
}

func TestLayersLinkAlone(t *testing.T) {
	if m := shimbuild.Missing(); m != "" {
		t.Skip(m)
	}
	data, err := os.ReadFile("build.flags")
	if err != nil {
		t.Fatal(err)
	}
	flags := map[string][]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if name, rest, ok := strings.Cut(line, " "); ok && !strings.HasPrefix(line, "#") {
			flags[name] = strings.Fields(rest)
		}
	}
	if flags["cflags"] == nil || flags["libs"] == nil {
		t.Fatal("build.flags: no cflags or libs line")
	}
	if err := shimbuild.Consult("*.c", "*.h"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, set := range layerSets {
		out := filepath.Join(dir, "layer.so")
		args := append(append(append(append([]string{}, flags["cflags"]...), "-o", out), set...), flags["libs"]...)
		if b, err := exec.Command(shimbuild.CC(), args...).CombinedOutput(); err != nil {
			t.Errorf("%s does not link without the layers above it: %v\n%s", strings.Join(set, " "), err, b)
		}
	}
}
