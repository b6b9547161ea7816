package report

import "github.com/streamcheck/streamcheck/checker"

// This file is the one place reports learn the checker's rules, so that a
// change to how the checker lists them is a change here only.

// rule is what a report needs to know of a rule.
type rule struct {
	id       string
	severity checker.Severity
	doc      string // One sentence: what the rule finds.
	// helpText and helpMarkdown are the rule's whole documentation: what
	// it finds, why it matters and how to fix it.
	helpText, helpMarkdown string
}

// rules returns every rule in the checker's order: errors first, notes last.
func rules() []rule {
	rs := make([]rule, len(checker.Rules))
	for i, r := range checker.Rules {
		text, md := r.Help()
		rs[i] = rule{id: r.ID, severity: r.Severity, doc: r.Doc, helpText: text, helpMarkdown: md}
	}
	return rs
}
