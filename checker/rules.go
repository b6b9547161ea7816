package checker

import "fmt"

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

// Rule is one check. IDs are stable: suppressions and baselines name them.
type Rule struct {
	ID       string
	Severity Severity
	Doc      string
}

// Rule ids.
const (
	RuleUseBeforeAlloc      = "use-before-alloc"
	RuleUseAfterFree        = "use-after-free"
	RuleFreeWhileInFlight   = "free-while-in-flight"
	RuleReuseWhileInFlight  = "reuse-while-in-flight"
	RuleFreeBeforeAlloc     = "free-before-alloc"
	RuleDoubleFree          = "double-free"
	RuleInvalidFree         = "invalid-free"
	RuleLeak                = "leak"
	RuleWaitUnrecordedEvent = "wait-unrecorded-event"
	RuleStreamMemOp         = "stream-memory-op"
	RuleFreedArgumentWord   = "freed-argument-word"
)

// Rules lists every rule, errors first, notes last.
var Rules = []Rule{
	{RuleUseBeforeAlloc, SeverityError, "a use of stream-ordered memory is not ordered after its allocation"},
	{RuleUseAfterFree, SeverityError, "memory is used after it was freed"},
	{RuleFreeWhileInFlight, SeverityError, "a free is not ordered after an earlier use on another stream, which may still be running"},
	{RuleReuseWhileInFlight, SeverityError, "a new allocation is used while work on the freed allocation at the same addresses may still be running"},
	{RuleFreeBeforeAlloc, SeverityError, "a free is not ordered after its allocation"},
	{RuleDoubleFree, SeverityError, "memory is freed twice"},
	{RuleInvalidFree, SeverityError, "a free names an address that is not the start of a live allocation"},
	{RuleLeak, SeverityWarning, "stream-ordered memory is never freed (reported with --leak-check full; by default only counted)"},
	{RuleWaitUnrecordedEvent, SeverityWarning, "a wait on an event that was never recorded orders nothing"},
	{RuleStreamMemOp, SeverityWarning, "a stream memory operation orders streams in a way streamcheck cannot follow (a wait for a value no recorded write gives, a write no recorded wait reads): findings between them may be false alarms, or missed after a wait an unordered write may have met first"},
	{RuleFreedArgumentWord, SeverityNote, "a word inside a launch's aggregate parameter, not a pointer slot, holds an address of freed memory: a use after free only if the kernel reads it as a pointer"},
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

func severityOf(id string) Severity {
	r, _ := LookupRule(id)
	return r.Severity
}
