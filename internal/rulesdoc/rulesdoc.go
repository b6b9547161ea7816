// Package rulesdoc makes the README's rules table from the rules'
// documentation (checker.Rules; each rule's is in checker/rule_<id>.go).
// go generate ./checker writes it into README.md, between the markers
// Begin and End; a test fails when the README's table is stale.
package rulesdoc

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/streamcheck/streamcheck/checker"
)

// The markers around the generated table in README.md.
const (
	Begin = "<!-- rules table: made by `go generate ./checker` from checker/rule_*.go; edit those, not this table -->"
	End   = "<!-- end of rules table -->"
)

// Table returns the Markdown table of rules: each rule's id, severity and
// documentation text, in the order of rules.
func Table(rules []checker.Rule) string {
	var b strings.Builder
	b.WriteString("| id | severity | what it finds |\n| --- | --- | --- |\n")
	for _, r := range rules {
		text := r.Doc
		if r.Docs != nil {
			text = r.Docs.Text
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.ID, r.Severity, strings.ReplaceAll(text, "|", `\|`))
	}
	return b.String()
}

// Splice returns readme with the text between its markers (Begin and End,
// each on a line of its own) replaced by table.
func Splice(readme []byte, table string) ([]byte, error) {
	begin := bytes.Index(readme, []byte(Begin+"\n"))
	if begin < 0 || bytes.Count(readme, []byte(Begin)) != 1 {
		return nil, fmt.Errorf("want one line %q", Begin)
	}
	start := begin + len(Begin) + 1
	n := bytes.Index(readme[start:], []byte(End+"\n"))
	if n < 0 || (n > 0 && readme[start+n-1] != '\n') {
		return nil, fmt.Errorf("want a line %q after %q", End, Begin)
	}
	out := append([]byte(nil), readme[:start]...)
	out = append(out, table...)
	return append(out, readme[start+n:]...), nil
}
