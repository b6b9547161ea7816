package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
)

func TestRulesCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(&out, &errb, []string{"rules"}); code != exitOK {
		t.Fatalf("rules: exit %d, stderr %q", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(checker.Rules) {
		t.Fatalf("rules lists %d lines, want one for each of the %d rules:\n%s", len(lines), len(checker.Rules), out.String())
	}
	for i, r := range checker.Rules {
		if f := strings.Fields(lines[i]); len(f) < 3 || f[0] != r.ID || f[1] != r.Severity.String() {
			t.Errorf("line %d = %q, want rule %s (%s) and its title", i, lines[i], r.ID, r.Severity)
		}
	}

	out.Reset()
	if code := run(&out, &errb, []string{"rules", "free-while-in-flight", "sync-alloc-in-loop"}); code != exitOK {
		t.Fatalf("rules free-while-in-flight sync-alloc-in-loop: exit %d, stderr %q", code, errb.String())
	}
	for _, id := range []string{"free-while-in-flight", "sync-alloc-in-loop"} {
		r, _ := checker.LookupRule(id)
		text, _ := r.Help()
		if !strings.Contains(out.String(), id+" ("+r.Severity.String()+")\n"+text) {
			t.Errorf("rules %s does not print the rule's help:\n%s", id, out.String())
		}
		if !strings.Contains(text, "Fix: ") {
			t.Errorf("%s's help has no fix: %q", id, text)
		}
	}

	out.Reset()
	errb.Reset()
	if code := run(&out, &errb, []string{"rules", "no-such-rule"}); code != exitUsage {
		t.Errorf("rules no-such-rule: exit %d, want %d", code, exitUsage)
	}
	if !strings.Contains(errb.String(), `unknown rule "no-such-rule"`) {
		t.Errorf("rules no-such-rule: stderr %q does not name the rule", errb.String())
	}
}
