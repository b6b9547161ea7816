// Package scripts_test checks that the repository's shell scripts and Python
// programs parse. Most of them run only on the GPU machine, where a syntax
// error costs a machine start; here it costs a failed test.
package scripts_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repoFiles lists the files under the repository root that match the
// patterns, failing the test when a pattern matches nothing.
func repoFiles(t *testing.T, patterns ...string) []string {
	t.Helper()
	var files []string
	for _, p := range patterns {
		m, err := filepath.Glob(filepath.Join("..", p))
		if err != nil || len(m) == 0 {
			t.Fatalf("pattern %s matches no file (%v)", p, err)
		}
		files = append(files, m...)
	}
	return files
}

func TestShellScriptsParse(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	files := repoFiles(t, "scripts/*.sh", "scripts/probe/*.sh", "bench/*.sh", ".ci/run")
	for _, f := range files {
		if out, err := exec.Command(bash, "-n", f).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v\n%s", f, err, out)
		}
	}
}

func TestPythonProgramsCompile(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	files := repoFiles(t, "scripts/*.py", "bench/gpu/*.py", "testdata/python/*.py")
	// compile() without writing .pyc files into the tree.
	const check = "import sys\nfor f in sys.argv[1:]:\n    compile(open(f, encoding='utf-8').read(), f, 'exec')\n"
	if out, err := exec.Command(python, append([]string{"-c", check}, files...)...).CombinedOutput(); err != nil {
		t.Errorf("python3 compile of %d programs: %v\n%s", len(files), err, strings.TrimSpace(string(out)))
	}
}
