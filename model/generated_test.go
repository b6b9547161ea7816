package model_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/streamcheck/streamcheck/model/internal/opgen"
)

// The files generated from the op spec are as it makes them: run
// `go generate ./model` after changing model/opspec.go.
func TestGeneratedFilesUpToDate(t *testing.T) {
	files, err := opgen.Files("..")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("nothing generated")
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join("..", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate ./model", name)
		}
	}
}

// The header says it is generated, in the words tools look for.
func TestGeneratedHeaderMarked(t *testing.T) {
	first, _, _ := bytes.Cut(opgen.Header(), []byte("\n"))
	if !bytes.Contains(first, []byte("Code generated")) || !bytes.Contains(first, []byte("DO NOT EDIT.")) {
		t.Errorf("first line %q lacks the generated-code marker", first)
	}
}
