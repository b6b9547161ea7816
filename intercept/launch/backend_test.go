package launch

import (
	"slices"
	"testing"
)

func TestBackend(t *testing.T) {
	for _, tc := range []struct {
		flag      string
		env       []string
		want, why string
		bad       bool
	}{
		{"", nil, DefaultBackend, "the default", false},
		{"", []string{"STREAMCHECK_BACKEND=interpose"}, "interpose", BackendVar, false},
		{"cupti", []string{"STREAMCHECK_BACKEND=interpose"}, "cupti", "--backend", false},
		{"interpose", nil, "interpose", "--backend", false},
		{"ptrace", nil, "", "", true},
		{"", []string{"STREAMCHECK_BACKEND=gdb"}, "", "", true},
	} {
		got, why, err := Backend(tc.flag, tc.env)
		if (err != nil) != tc.bad || got != tc.want || why != tc.why {
			t.Errorf("Backend(%q, %q) = %q, %q, %v; want %q, %q, error %v", tc.flag, tc.env, got, why, err, tc.want, tc.why, tc.bad)
		}
	}
	env := WithBackend([]string{"A=1", "STREAMCHECK_BACKEND=cupti"}, "interpose")
	if !slices.Equal(env, []string{"A=1", "STREAMCHECK_BACKEND=interpose"}) {
		t.Errorf("WithBackend: %q", env)
	}
	if !NeedsPreload(BackendInterpose) || NeedsPreload(BackendCUPTI) {
		t.Error("only the interpose backend needs the shim preloaded")
	}
}
