package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestBackendFlag: record and run take the recording backend from
// --backend, reject one that is neither interpose nor cupti before running
// anything, and preload the shim for the interpose backend.
func TestBackendFlag(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--backend", "ptrace", "--", "true"},
		{"record", "-o", t.TempDir(), "--backend", "ptrace", "--", "true"},
	} {
		var out, errb bytes.Buffer
		if code := run(&out, &errb, args); code != exitUsage {
			t.Errorf("%q: exit %d, want %d (stderr %q)", args, code, exitUsage, errb.String())
		}
		if !strings.Contains(errb.String(), `--backend "ptrace": the backend is interpose or cupti`) {
			t.Errorf("%q: stderr %q", args, errb.String())
		}
	}
	t.Setenv("STREAMCHECK_BACKEND", "interpose")
	c := &cli{}
	preload := false
	if err := c.useBackend("", &preload); err != nil || c.backend != "interpose" || !preload {
		t.Errorf("STREAMCHECK_BACKEND=interpose: backend %q, preload %v, err %v", c.backend, preload, err)
	}
	preload = false
	if err := c.useBackend("cupti", &preload); err != nil || c.backend != "cupti" || preload {
		t.Errorf("--backend cupti: backend %q, preload %v, err %v", c.backend, preload, err)
	}
}
