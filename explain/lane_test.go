package explain

import "testing"

// TestLaneName: a lane shows the program's name for its stream with the
// stable id, the id alone where the source does not tell or says the same.
func TestLaneName(t *testing.T) {
	for _, c := range []struct{ id, program, want string }{
		{"s4", "s1", "`s1` (s4)"},
		{"s4", "", "s4"},
		{"s2", "s2", "s2"},
	} {
		if got := laneName(c.id, c.program); got != c.want {
			t.Errorf("laneName(%q, %q) = %q, want %q", c.id, c.program, got, c.want)
		}
	}
}
