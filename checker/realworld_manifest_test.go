package checker_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestRealWorldCorpusIsReproducible checks that every program of the
// real-world corpus is one scripts/corpus-build.sh can build or run again: a
// cuda-sample row names its Samples/ folder, a racy variant of a sample is
// one scripts/corpus-variants.py knows, and every CuPy and PyTorch row has
// its command in testdata/python/corpus-cupy.tsv or corpus-torch.tsv, which
// in turn name no program the corpus does not hold.
func TestRealWorldCorpusIsReproducible(t *testing.T) {
	rows := readVerdicts(t, filepath.Join("..", "testdata", "realworld", "VERDICTS.tsv"))
	variants := variantNames(t, filepath.Join("..", "scripts", "corpus-variants.py"))
	commands := map[string]bool{}
	for _, m := range []string{"corpus-cupy.tsv", "corpus-torch.tsv"} {
		for _, name := range manifestNames(t, filepath.Join("..", "testdata", "python", m)) {
			commands[name] = true
		}
	}
	inCorpus := map[string]bool{}
	for _, r := range rows {
		inCorpus[r.name] = true
		switch {
		case strings.HasPrefix(r.program, "NVIDIA cuda-samples Samples/"):
			if r.kind == "racy" {
				t.Errorf("%s: a racy variant must name the sample it changes, not a Samples/ folder of its own", r.name)
			}
		case strings.HasPrefix(r.program, "NVIDIA cuda-samples"):
			if !variants[r.name] {
				t.Errorf("%s: scripts/corpus-variants.py has no such variant", r.name)
			}
		default:
			if !commands[r.name] {
				t.Errorf("%s: no row in testdata/python/corpus-cupy.tsv or corpus-torch.tsv", r.name)
			}
		}
	}
	var extra []string
	for name := range commands {
		if !inCorpus[name] {
			extra = append(extra, name)
		}
	}
	for name := range variants {
		if !inCorpus[name] {
			extra = append(extra, name)
		}
	}
	own, err := os.ReadFile(filepath.Join("..", "scripts", "corpus-samples-extra.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(own), "\n") {
		if name, _, ok := strings.Cut(line, "\t"); ok && !strings.HasPrefix(line, "#") && !inCorpus[name] {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range extra {
		t.Errorf("%s: in a corpus manifest but not in testdata/realworld/VERDICTS.tsv", name)
	}
}

// variantNames reads the keys of corpus-variants.py's SAMPLES table.
func variantNames(t *testing.T, path string) map[string]bool {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(src), "SAMPLES = {")
	table, _, ok2 := strings.Cut(table, "}")
	if !ok || !ok2 {
		t.Fatalf("%s: no SAMPLES table", path)
	}
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`"([A-Za-z0-9_]+)":`).FindAllStringSubmatch(table, -1) {
		names[m[1]] = true
	}
	if len(names) == 0 {
		t.Fatalf("%s: SAMPLES names no variant", path)
	}
	return names
}

// manifestNames reads the program names of a gpu-corpus.sh manifest (name,
// kind, expected, workdir, command).
func manifestNames(t *testing.T, path string) []string {
	t.Helper()
	rows, _ := readTSV(t, path, 5)
	names := make([]string, len(rows))
	for i, col := range rows {
		names[i] = col[0]
	}
	return names
}
