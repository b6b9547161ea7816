package main

import (
	"fmt"
	"strings"

	"github.com/streamcheck/streamcheck/checker"
)

const rulesUsage = `
usage: streamcheck rules [RULE...]

Rules lists every rule with its severity and what it finds. Given rule ids,
it prints each one's whole documentation: what it finds, why it matters and
how to fix it (the text SARIF carries as the rule's help).
`

// cmdRules prints the rules' documentation, from the rules themselves
// (checker.Rules), as the README's table and SARIF's rule metadata are.
func (c *cli) cmdRules(args []string) int {
	ids, code, done := c.parseFlags(newFlags("rules"), rulesUsage, args, true)
	if done {
		return code
	}
	var b strings.Builder
	if len(ids) == 0 {
		for _, r := range checker.Rules {
			fmt.Fprintf(&b, "%-24s %-8s %s\n", r.ID, r.Severity, r.Doc)
		}
	}
	for i, id := range ids {
		r, err := checker.LookupRule(id)
		if err != nil {
			return c.usageErrorf("%v (streamcheck rules lists them)", err)
		}
		if i > 0 {
			b.WriteString("\n")
		}
		text, _ := r.Help()
		fmt.Fprintf(&b, "%s (%s)\n%s\n", r.ID, r.Severity, text)
	}
	return c.printStdout("rules", b.String())
}
