package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// jsonSchemaFile is the JSON report's schema, which docs/json-report.md
// documents.
const jsonSchemaFile = "../../docs/json-report.schema.json"

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

// reportSchema compiles the schema once. The path is made absolute: the
// scripts run in their own directories.
func reportSchema() (*jsonschema.Schema, error) {
	schemaOnce.Do(func() {
		var abs string
		if abs, schemaErr = filepath.Abs(jsonSchemaFile); schemaErr != nil {
			return
		}
		schema, schemaErr = jsonschema.NewCompiler().Compile(abs)
	})
	return schema, schemaErr
}

// validateReport checks a JSON report against the schema.
func validateReport(data []byte) error {
	s, err := reportSchema()
	if err != nil {
		return err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return s.Validate(doc)
}

// cmdJSONSchema is the scripts' "jsonschema stdout|stderr|FILE": the JSON
// report there is valid by docs/json-report.schema.json.
func cmdJSONSchema(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: jsonschema stdout|stderr|FILE")
	}
	data := ts.ReadFile(args[0]) // "stdout" and "stderr" are the last command's
	err := validateReport([]byte(data))
	if neg && err == nil {
		ts.Fatalf("%s is a valid report", args[0])
	}
	if !neg && err != nil {
		ts.Fatalf("%s: %v", args[0], err)
	}
}

// TestJSONSchemaReal: the JSON report of every committed real recording
// (every rule the GPU programs make, Python and C++ stacks, damaged and
// multi-process traces) is valid by the schema, and so is the golden one.
func TestJSONSchemaReal(t *testing.T) {
	golden, err := os.ReadFile("testdata/golden/racy.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := validateReport(golden); err != nil {
		t.Errorf("testdata/golden/racy.json: %v", err)
	}
	dirs, err := filepath.Glob("../../testdata/real/*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		out, stderr, code := checkInProcess(t, "--format", "json", "--leak-check", "full", dir)
		if code == exitUsage {
			t.Errorf("%s: exit 2: %s", dir, stderr)
			continue
		}
		if err := validateReport([]byte(out)); err != nil {
			t.Errorf("%s: %v", dir, err)
		}
		var rep struct{ Findings []json.RawMessage }
		json.Unmarshal([]byte(out), &rep)
		n += len(rep.Findings)
	}
	if n == 0 {
		t.Fatal("no findings in the real recordings: the schema's finding was never checked")
	}
}
