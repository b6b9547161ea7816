package rulesdoc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
)

// TestREADMETable fails when the README's rules table is not the one the
// rules' documentation makes: run go generate ./checker.
func TestREADMETable(t *testing.T) {
	path := filepath.Join("..", "..", "README.md")
	readme, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Splice(readme, Table(checker.Rules))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if string(want) != string(readme) {
		t.Errorf("%s: the rules table is stale; run go generate ./checker", path)
	}
}

// TestSplice replaces what is between the markers and nothing else, and
// refuses a README without them.
func TestSplice(t *testing.T) {
	in := "# x\n\n" + Begin + "\nold\ntable\n" + End + "\nafter\n"
	got, err := Splice([]byte(in), "new\n")
	if want := "# x\n\n" + Begin + "\nnew\n" + End + "\nafter\n"; err != nil || string(got) != want {
		t.Errorf("Splice = %q, %v; want %q", got, err, want)
	}
	for _, bad := range []string{"no markers\n", Begin + "\nno end\n", End + "\n" + Begin + "\n", Begin + "\n" + Begin + "\n" + End + "\n"} {
		if _, err := Splice([]byte(bad), "t\n"); err == nil {
			t.Errorf("Splice(%q) did not fail", bad)
		}
	}
}

// TestTable: a row for each rule, in order, with its id, severity and
// documentation text.
func TestTable(t *testing.T) {
	lines := strings.Split(strings.TrimSuffix(Table(checker.Rules), "\n"), "\n")
	if len(lines) != 2+len(checker.Rules) {
		t.Fatalf("%d lines for %d rules", len(lines), len(checker.Rules))
	}
	for i, r := range checker.Rules {
		if want := "| `" + r.ID + "` | " + r.Severity.String() + " | "; !strings.HasPrefix(lines[2+i], want) {
			t.Errorf("row %d = %q, want it to start %q", i, lines[2+i], want)
		}
	}
}
