package report

import (
	"slices"
	"testing"
)

func TestRegistry(t *testing.T) {
	if got, want := Names(), []string{"text", "json", "sarif", "junit"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %q, want %q", got, want)
	}
	if got, want := NameList(), "text, json, sarif or junit"; got != want {
		t.Errorf("NameList() = %q, want %q", got, want)
	}
	for _, name := range Names() {
		if f, err := Lookup(name); f == nil || err != nil {
			t.Errorf("Lookup(%q) = %v, %v", name, f, err)
		}
	}
	_, err := Lookup("html")
	if want := `unknown report format "html" (want text, json, sarif or junit)`; err == nil || err.Error() != want {
		t.Errorf("Lookup(html): %v, want %s", err, want)
	}
}
