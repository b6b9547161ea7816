package main

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite the golden files (testdata/golden) and the cmp files of testdata/script")

// TestMain lets the scripts run "streamcheck": testscript re-executes this
// test binary under that name, which calls main.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"streamcheck": main})
}

// TestScripts runs testdata/script/*.txtar.
//
// Besides the standard commands, scripts have:
//
//	status CODE PROGRAM [ARG...]   run PROGRAM and want exit code CODE
//	truncate FILE N                cut FILE to N bytes (N < 0: drop -N bytes from the end)
//
// $STREAMCHECK_SHIM names an empty stand-in for the recording shim: the
// programs the scripts run make no CUDA calls, so nothing loads it, and a
// script plays the shim by writing into $STREAMCHECK_DIR itself.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			shim := filepath.Join(env.WorkDir, ".shim", "libstreamcheck.so")
			if err := os.MkdirAll(filepath.Dir(shim), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(shim, nil, 0o644); err != nil {
				return err
			}
			env.Setenv("STREAMCHECK_SHIM", shim)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status":   cmdStatus,
			"truncate": cmdTruncate,
		},
	})
}

func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status CODE PROGRAM [ARG...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit code %d, want %d", got, want)
	}
}

func cmdTruncate(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: truncate FILE N")
	}
	n, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	file := ts.MkAbs(args[0])
	if n < 0 {
		st, err := os.Stat(file)
		ts.Check(err)
		n += st.Size()
	}
	ts.Check(os.Truncate(file, n))
}
