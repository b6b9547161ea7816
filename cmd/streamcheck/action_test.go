package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The repository's GitHub Action (action.yml) is a composite action: its
// shell steps install streamcheck, run it and fail the job on its exit code.
// GitHub cannot run it from here, so TestActionSteps runs those steps as
// the runner does (bash --noprofile --norc -eo pipefail, GITHUB_OUTPUT,
// GITHUB_PATH, the ${{ }} expressions they use), leaving out the steps that
// use other actions (setup-go: Go is here; upload-sarif: GitHub's).

// action is the part of action.yml the test runs.
type action struct {
	Inputs map[string]struct {
		Default string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

type actionStep struct {
	Name  string            `yaml:"name"`
	ID    string            `yaml:"id"`
	If    string            `yaml:"if"`
	Uses  string            `yaml:"uses"`
	Shell string            `yaml:"shell"`
	Run   string            `yaml:"run"`
	Env   map[string]string `yaml:"env"`
}

// actionRun is how one use of the action ended.
type actionRun struct {
	code    int               // The job's: 0, or the exit code of the step that failed.
	outputs map[string]string // The action's outputs.
	log     string            // What its steps printed.
}

// actionRunner runs action.yml's shell steps with an action path (a copy
// of the repository) and a workspace of their own.
type actionRunner struct {
	t         *testing.T
	spec      action
	path      string // GITHUB_ACTION_PATH
	workspace string // GITHUB_WORKSPACE, the steps' working directory
}

// run uses the action with the inputs with, as a workflow's step would.
func (r *actionRunner) run(with map[string]string) actionRun {
	t := r.t
	t.Helper()
	inputs := map[string]string{}
	for name, in := range r.spec.Inputs {
		inputs[name] = in.Default
	}
	for k, v := range with {
		if _, ok := r.spec.Inputs[k]; !ok {
			t.Fatalf("action.yml has no input %q", k)
		}
		inputs[k] = v
	}
	temp := t.TempDir()
	steps := map[string]map[string]string{} // step id -> its outputs
	ctx := func(ref string) string {
		switch parts := strings.Split(ref, "."); {
		case len(parts) == 2 && parts[0] == "inputs":
			return inputs[parts[1]]
		case len(parts) == 4 && parts[0] == "steps" && parts[2] == "outputs":
			return steps[parts[1]][parts[3]]
		case ref == "github.action_path":
			return r.path
		}
		t.Fatalf("action.yml: expression %q is not one this test knows", ref)
		return ""
	}
	var log strings.Builder
	var path []string // GITHUB_PATH's entries, most recent first
	res := actionRun{outputs: map[string]string{}}
	for i, st := range r.spec.Runs.Steps {
		if st.Uses != "" {
			continue // another action: setup-go, upload-sarif
		}
		// An if without a status function is success() && if: no step
		// runs after one failed (action.yml's shell steps use none).
		if res.code != 0 || st.If != "" && !evalIf(t, st.If, ctx) {
			continue
		}
		if st.Shell != "bash" {
			t.Fatalf("action.yml step %q: shell %q, want bash", st.Name, st.Shell)
		}
		script := filepath.Join(temp, fmt.Sprintf("step%d.sh", i))
		output := filepath.Join(temp, fmt.Sprintf("output%d", i))
		pathFile := filepath.Join(temp, fmt.Sprintf("path%d", i))
		for _, f := range []string{output, pathFile} {
			if err := os.WriteFile(f, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(script, []byte(expand(st.Run, ctx)), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
		cmd.Dir = r.workspace
		cmd.Env = append(os.Environ(),
			"PATH="+strings.Join(append(path, os.Getenv("PATH")), string(os.PathListSeparator)),
			"GITHUB_ACTION_PATH="+r.path, "GITHUB_WORKSPACE="+r.workspace, "RUNNER_TEMP="+temp,
			"GITHUB_OUTPUT="+output, "GITHUB_PATH="+pathFile, "GITHUB_RUN_ID=1", "GITHUB_RUN_ATTEMPT=1",
			// The modules this test was built from are in the cache; -trimpath
			// lets builds from copies in other directories share the build cache.
			"GOPROXY=off", "GOFLAGS=-trimpath")
		for k, v := range st.Env {
			cmd.Env = append(cmd.Env, k+"="+expand(v, ctx))
		}
		out, err := cmd.CombinedOutput()
		fmt.Fprintf(&log, "== %s\n%s", st.Name, out)
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee) && strings.Contains(string(out), "GOPROXY=off"):
			t.Skipf("step %q needs the network (modules not in the cache):\n%s", st.Name, out)
		case errors.As(err, &ee):
			res.code = ee.ExitCode()
		case err != nil:
			t.Fatalf("step %q: %v", st.Name, err)
		}
		if st.ID != "" {
			steps[st.ID] = readOutputs(t, output)
		}
		added := readLines(t, pathFile)
		for j := len(added) - 1; j >= 0; j-- {
			path = append([]string{added[j]}, path...)
		}
	}
	for name, o := range r.spec.Outputs {
		res.outputs[name] = expand(o.Value, ctx)
	}
	res.log = log.String()
	return res
}

var expression = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// expand replaces each ${{ REF }} of s with REF's value.
func expand(s string, ctx func(string) string) string {
	return expression.ReplaceAllStringFunc(s, func(m string) string {
		return ctx(expression.FindStringSubmatch(m)[1])
	})
}

var comparison = regexp.MustCompile(`^([\w.-]+)\s*(==|!=)\s*'([^']*)'$`)

// evalIf evaluates a step's if: a comparison of a context value with a
// string, the only form action.yml's shell steps use.
func evalIf(t *testing.T, cond string, ctx func(string) string) bool {
	t.Helper()
	m := comparison.FindStringSubmatch(strings.TrimSpace(cond))
	if m == nil {
		t.Fatalf("action.yml: if %q is not a comparison this test knows", cond)
	}
	return (ctx(m[1]) == m[3]) == (m[2] == "==")
}

// readOutputs reads a GITHUB_OUTPUT file of NAME=VALUE lines.
func readOutputs(t *testing.T, file string) map[string]string {
	out := map[string]string{}
	for _, l := range readLines(t, file) {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			t.Fatalf("GITHUB_OUTPUT line %q is not NAME=VALUE", l)
		}
		out[k] = v
	}
	return out
}

func readLines(t *testing.T, file string) []string {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if sc.Text() != "" {
			lines = append(lines, sc.Text())
		}
	}
	return lines
}

// copyTracked copies the repository's tracked files that building
// streamcheck needs (not the recordings and benchmarks) under dir.
func copyTracked(t *testing.T, root, dir string) {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("git ls-files: %v (not a checkout)", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		slash := filepath.ToSlash(f)
		demo := strings.HasPrefix(slash, "cmd/streamcheck/testdata/demo/")
		if !demo && (strings.Contains("/"+slash, "/testdata/") || strings.HasPrefix(slash, "bench/") || slash == "cmd/streamcheck/streamcheck") {
			continue
		}
		st, err := os.Lstat(filepath.Join(root, f))
		if err != nil || !st.Mode().IsRegular() {
			continue // deleted in the working tree, or a link
		}
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, st.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestActionSteps runs action.yml's shell steps against committed
// recordings: streamcheck is built from the action's source (version:
// source; a release tag downloads one, which needs the network and is not
// run here), the SARIF report is written, the exit-code output is
// streamcheck's, and the job fails with it when it is not 0.
func TestActionSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("builds streamcheck from a copy of the repository")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	r := &actionRunner{t: t, path: filepath.Join(t.TempDir(), "action"), workspace: t.TempDir()}
	if err := yaml.Unmarshal(data, &r.spec); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if r.spec.Runs.Using != "composite" {
		t.Fatalf("action.yml: runs.using %q, want composite", r.spec.Runs.Using)
	}
	copyTracked(t, root, r.path)
	const racyTrace = "reuse_while_in_flight_racy-static"
	if err := os.CopyFS(filepath.Join(r.workspace, "traces", racyTrace), os.DirFS(filepath.Join(root, "testdata", "real", racyTrace))); err != nil {
		t.Fatal(err)
	}

	// A race: the report is in the log and the SARIF file, exit-code 1, and
	// the job fails with it.
	racy := r.run(map[string]string{"mode": "check", "command": "traces/" + racyTrace, "upload": "false"})
	if racy.outputs["exit-code"] != "1" || racy.code != 1 {
		t.Fatalf("racy trace: exit-code %q, job %d; want 1, 1\n%s", racy.outputs["exit-code"], racy.code, racy.log)
	}
	if !strings.Contains(racy.log, "error[reuse-while-in-flight]") || !strings.Contains(racy.log, "streamcheck exited 1") {
		t.Errorf("the log lacks the text report or the exit code:\n%s", racy.log)
	}
	if got := sarifRules(t, filepath.Join(r.workspace, racy.outputs["sarif"])); strings.Join(got, ",") != "reuse-while-in-flight" {
		t.Errorf("streamcheck.sarif: results %v, want one reuse-while-in-flight", got)
	}

	// args reach streamcheck as shell words.
	racy86 := r.run(map[string]string{"mode": "check", "command": "traces/" + racyTrace, "args": "--error-exitcode 86", "upload": "false"})
	if racy86.outputs["exit-code"] != "86" || racy86.code != 86 {
		t.Errorf("--error-exitcode 86: exit-code %q, job %d; want 86, 86\n%s", racy86.outputs["exit-code"], racy86.code, racy86.log)
	}

	// mode: run records a program; one that exits without initializing
	// CUDA passes its exit code through, and the job passes on 0. (Each
	// use of the action builds the shim again, some seconds: these three
	// cover the exit codes.)
	run := r.run(map[string]string{"command": `echo "recorded by the action"`, "sarif": "run.sarif", "upload": "false"})
	if run.outputs["exit-code"] != "0" || run.code != 0 || !strings.Contains(run.log, "recorded by the action") {
		t.Errorf("mode run: exit-code %q, job %d; want 0, 0 and the program's output\n%s", run.outputs["exit-code"], run.code, run.log)
	}
	if _, err := os.Stat(filepath.Join(r.workspace, "run.sarif")); err != nil {
		t.Errorf("mode run wrote no SARIF report: %v", err)
	}
}

// sarifRules returns the rule id of each result of a SARIF report.
func sarifRules(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("SARIF report: %v", err)
	}
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []struct {
				RuleID string `json:"ruleId"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(data, &log); err != nil || log.Version != "2.1.0" || len(log.Runs) != 1 {
		t.Fatalf("%s: not a SARIF 2.1.0 log of one run (%v)", file, err)
	}
	var ids []string
	for _, r := range log.Runs[0].Results {
		ids = append(ids, r.RuleID)
	}
	return ids
}
