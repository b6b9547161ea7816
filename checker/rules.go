package checker

import (
	"fmt"

	"github.com/streamcheck/streamcheck/model"
)

// Each rule is defined in its own file, rule_<id>.go, which registers it
// (plugin.go): its id, rank, severity and documentation, the roles its
// findings give their operations, how a finding is explained, and its
// state and hooks, or, for the rules about uses and frees, the check in
// the shared memory state that reports it. Its golden files are in
// testdata/rules/<id>/. The README's rules table is made from the
// documentation here.
//
//go:generate go run ../internal/rulesdoc/gen -readme ../README.md

// Severity of a finding. Errors fail a run; warnings and notes do not.
// Notes report evidence too weak to call a bug (a word of a launch's
// parameters that is not a pointer slot naming freed memory).
type Severity uint8

const (
	SeverityNote    Severity = 0
	SeverityWarning Severity = 1
	SeverityError   Severity = 2
)

func (s Severity) String() string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityNote:
		return "note"
	}
	return "warning"
}

// RuleID names a rule. IDs are stable: suppressions, baselines and
// reports name them (Finding.Rule and Rule.ID are their strings). Each
// rule's file defines its id.
type RuleID string

// Rule is one check. IDs are stable: suppressions and baselines name them.
type Rule struct {
	ID       string // The RuleID, as reports write it.
	Severity Severity
	Doc      string         // One line: what the rule finds (Docs.Title).
	Docs     *Documentation // The rule's documentation.
}

// Documentation is a rule's documentation, defined with the rule (in
// rule_<id>.go). The README's rules table is made from it (go generate),
// and reports' rule metadata can use it (Rule.Help).
type Documentation struct {
	// Title says in one line what the rule finds (Rule.Doc; SARIF's rule
	// description).
	Title string
	// Text says in Markdown what the rule finds and where its edges are:
	// the README's rules table.
	Text string
	// Why says why what the rule finds is a bug, or what a warning or note
	// warns of.
	Why string
	// Fix says how such a finding is fixed, in general; a finding's own
	// Fix names its call sites and streams.
	Fix string
	// Ops are the operations of a trace at which the rule is checked: the
	// operation a finding reports first is one of them. A rule checked at
	// the end of the trace (leak) names the operations whose effect is
	// checked there.
	Ops []model.Op
}

// Help returns the rule's documentation as plain text and as Markdown, for
// reports' rule metadata (SARIF's help): what it finds, why that is a bug,
// and how it is fixed.
func (r Rule) Help() (text, markdown string) {
	d := r.Docs
	if d == nil {
		return r.Doc, r.Doc
	}
	text = d.Title + ".\n\n" + d.Why + "\n\nFix: " + d.Fix
	markdown = "**" + r.ID + "** (" + r.Severity.String() + "): " + d.Text + ".\n\n" + d.Why + "\n\n**Fix:** " + d.Fix
	return text, markdown
}

// ruleDef defines a rule. Each is a variable of its rule's file, which
// registers it.
type ruleDef struct {
	// rank places the rule in Rules (errors first, notes last), and
	// endRank its end hook among the others' (see endHook).
	rank, endRank int
	// precedence orders the rule's hooks of one kind that a chain asks in
	// turn, until one settles the event (lower first; then by rank): the
	// use and free hooks (plugin.go).
	precedence int
	// state, for a rule with state of its own, makes it for one trace:
	// a value with the rule's hooks (plugin.go).
	state    func(c *Checker) any
	id       RuleID
	severity Severity
	doc      Documentation
	// role names the part of the operation a finding reports first ("use"
	// when empty), other the part of the one it conflicts with
	// ("allocation" when empty). roleFor, when set, gives role from the
	// finding's note.
	role, other string
	roleFor     func(memNote) string
	// unorderedUse puts the rule's occurrences in one finding with the
	// other unordered-use rule's (see unorderedUse), and alsoForm says, in
	// the Why of a finding of that rule, how this one occurred.
	unorderedUse bool
	alsoForm     string
	// explain fills a finding's Message, Why and Fix; explainCaptured does
	// for a race inside a captured graph (nil: nothing is said).
	explain         func(c *Checker, f *Finding, x *explainArgs)
	explainCaptured func(f *Finding, x *explainArgs, k *captureText)
	// missing returns the operation that should have been ordered before
	// the finding's first (its seq; alloc says it is the allocation): the
	// ordering whose absence the finding reports. ok is false when no
	// ordering added would make it right.
	missing func(f *Finding) (seq uint64, alloc, ok bool)
}

// ruleDefs lists every registered rule by rank, errors first, notes last:
// the order of Rules.
var ruleDefs []*ruleDef

// Rules lists every rule, errors first, notes last.
var Rules []Rule

// Rules are registered as their files' variables are initialized, which
// is before any init function runs.
func init() {
	ruleDefs = sortedRules()
	Rules = rulesOf(ruleDefs)
}

func rulesOf(defs []*ruleDef) []Rule {
	rules := make([]Rule, len(defs))
	for i, d := range defs {
		rules[i] = Rule{ID: string(d.id), Severity: d.severity, Doc: d.doc.Title, Docs: &d.doc}
	}
	return rules
}

// LookupRule returns the rule with the given id.
func LookupRule(id string) (Rule, error) {
	for _, r := range Rules {
		if r.ID == id {
			return r, nil
		}
	}
	return Rule{}, fmt.Errorf("unknown rule %q", id)
}

// defOf returns the definition of the rule id, or nil.
func defOf(id RuleID) *ruleDef {
	for _, d := range ruleDefs {
		if d.id == id {
			return d
		}
	}
	return nil
}

// roleOf names the part a finding's first operation plays.
func (d *ruleDef) roleOf(note memNote) string {
	switch {
	case d.roleFor != nil:
		return d.roleFor(note)
	case d.role != "":
		return d.role
	}
	return "use"
}

// otherRole names the part a finding's second operation plays.
func (d *ruleDef) otherRole() string {
	if d.other != "" {
		return d.other
	}
	return "allocation"
}

// MissingOrder returns the operation that should have been ordered before
// the finding's first operation, by its seq (alloc says it is the
// allocation, f.Alloc): the ordering whose absence the finding reports. ok
// is false for a finding that no added ordering would make right (a use
// issued after the free), or that is about one operation.
func MissingOrder(f *Finding) (seq uint64, alloc, ok bool) {
	d := defOf(RuleID(f.Rule))
	if d == nil || d.missing == nil || len(f.Ops) == 0 {
		return 0, false, false
	}
	return d.missing(f)
}

// missingOther is the missing ordering of a rule whose finding's second
// operation should have come first.
func missingOther(f *Finding) (uint64, bool, bool) {
	if len(f.Ops) < 2 {
		return 0, false, false
	}
	return f.Ops[1].Seq, false, true
}

// The operations at which the rules about uses and frees are checked, as
// the op spec's memory column says: the uses, the frees, and graph
// launches, which use and free what their graphs do.
var (
	useOps  = model.OpsWith(func(s model.OpSpec) bool { return s.Mem == model.MemUse || s.Mem == model.MemGraph })
	freeOps = model.OpsWith(func(s model.OpSpec) bool { return s.Mem.Frees() || s.Mem == model.MemGraph })
)
