package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/streamcheck/streamcheck/checker"
)

// A Formatter writes a report of an analysis in one format.
type Formatter interface {
	// Format writes the report of a to w. Errors are w's.
	Format(w io.Writer, a *Analysis, o *Options) error
}

// Options shape a report; each format uses the fields it needs.
type Options struct {
	// Color makes the text report use ANSI colors.
	Color bool
	// PrintLimit bounds the findings the text report prints in full,
	// errors first; 0 is no bound. The summary counts every finding.
	PrintLimit int
	// Root is the absolute source root: SARIF uris of files under it are
	// relative to it.
	Root string
	// ToolVersion is the driver's version ("v1.2.0"; "" when unknown),
	// which SARIF names.
	ToolVersion string
	// Elapsed, when not 0, is how long the analysis took: the text
	// summary then says so, with the events analyzed a second.
	Elapsed time.Duration
}

// Analysis is what a report is made of: the checker's results for a set of
// traces, and what the driver knows about them.
type Analysis struct {
	Results    []*checker.Result // One per readable trace, in input order.
	Unreadable []error           // Inputs that could not be read at all.
	// Suppressed and Baselined are the findings the driver took out of
	// Results (accepted by a suppression or in the baseline); reports
	// count them.
	Suppressed, Baselined []*checker.Finding
	// Program is how the recorded program ended, for a report of a run;
	// nil when the traces were recorded before.
	Program *Program
	// LeakCheck is how leaks were checked: "full" made leak findings,
	// "summary" (or "") has reports say how much memory was live at exit,
	// "none" says nothing.
	LeakCheck string
	// Elapsed is how long the analysis took.
	Elapsed time.Duration
}

// An InputError is an error of Analysis.Unreadable that names the input it
// is about; JUnit names the input's testsuite by it.
type InputError interface {
	error
	Input() string
}

// Program is how a program whose traces are analyzed ended, for reports
// that CI reads instead of the terminal: a failed program or one that made
// no CUDA call must not read as a clean run.
type Program struct {
	ExitCode int `json:"exit_code"` // The program's (128+N for signal N).
	// Recorded is false when no process of the tree wrote a trace: no
	// CUDA activity, or (with NotRecorded) the shim could not record.
	Recorded    bool     `json:"recorded"`
	NotRecorded []string `json:"not_recorded,omitempty"` // The shim's reasons.
}

// NoCUDAActivity is what a report says of a program that wrote no trace.
const NoCUDAActivity = "no CUDA activity was recorded"

// Failure says how the program failed, or "" if it did not.
func (p *Program) Failure() string {
	if p.ExitCode == 0 {
		return ""
	}
	return fmt.Sprintf("the program failed: exit code %d", p.ExitCode)
}

// Status says how the program ended, in the words every report format
// uses: "the program exited with code 0".
func (p *Program) Status() string {
	return fmt.Sprintf("the program exited with code %d", p.ExitCode)
}

// Notes says, one line each, what a report should carry besides findings.
func (p *Program) Notes() []string {
	var n []string
	if f := p.Failure(); f != "" {
		n = append(n, f)
	}
	n = append(n, p.NotRecorded...)
	if !p.Recorded && len(p.NotRecorded) == 0 {
		n = append(n, NoCUDAActivity)
	}
	return n
}

// Totals sums the findings and statistics of an analysis.
type Totals struct {
	Errors, Warnings, Notes, Traces, Damaged int
	Events, Allocations                      uint64
	Streams, Threads                         int
	Suppressed, Baselined                    int
	Live, LiveBytes                          uint64 // Stream-ordered memory live at exit.
	UnknownAddressUses                       uint64 // Uses of addresses no live recorded allocation covers.
	UnknownAddressFrees                      uint64 // Accepted synchronous frees of addresses no recorded allocation starts at.
	OverlappedAllocations                    uint64 // Allocations recorded over live ones.
}

// Totals sums a's findings and statistics.
func (a *Analysis) Totals() Totals {
	var t Totals
	for _, r := range a.Results {
		t.Traces++
		if r.Damage != nil {
			t.Damaged++
		}
		e, w, n := countSeverities(r.Findings)
		t.Errors, t.Warnings, t.Notes = t.Errors+e, t.Warnings+w, t.Notes+n
		t.Events += r.Stats.Events
		t.Allocations += r.Stats.Allocations
		t.Streams += r.Stats.Streams
		t.Threads += r.Stats.Threads
		t.Live += r.Stats.LiveAtExit
		t.LiveBytes += r.Stats.LiveBytesAtExit
		t.UnknownAddressUses += r.Stats.UnknownAddressUses
		t.UnknownAddressFrees += r.Stats.UnknownAddressFrees
		t.OverlappedAllocations += r.Stats.OverlappedAllocations
	}
	t.Suppressed, t.Baselined = len(a.Suppressed), len(a.Baselined)
	return t
}

// countSeverities counts the errors, warnings and notes among findings.
func countSeverities(findings []*checker.Finding) (errors, warnings, notes int) {
	for _, f := range findings {
		switch f.Severity {
		case checker.SeverityError:
			errors++
		case checker.SeverityNote:
			notes++
		default:
			warnings++
		}
	}
	return errors, warnings, notes
}

// leakMode returns the --leak-check mode ("summary" when none was set).
func (a *Analysis) leakMode() string {
	if a.LeakCheck == "" {
		return "summary"
	}
	return a.LeakCheck
}

// LiveNote says how much stream-ordered memory was live at the end of the
// complete traces, when LeakCheck is "summary" and there was some; ""
// otherwise.
func (a *Analysis) LiveNote() string {
	if a.leakMode() != "summary" {
		return ""
	}
	t := a.Totals()
	if t.Live == 0 {
		return ""
	}
	return fmt.Sprintf("live at exit: %s, %s (no leak findings: --leak-check full lists them)",
		Plural(t.Live, "stream-ordered allocation"), Plural(t.LiveBytes, "byte"))
}

// UnknownNote says how many uses named device addresses that no live
// recorded allocation covers, when some did; "" otherwise. Such memory
// comes from an allocation path the recording misses, so a gap in what
// was checked shows instead of passing in silence.
func (a *Analysis) UnknownNote() string {
	t := a.Totals()
	return unknownNote(t.UnknownAddressUses, t.UnknownAddressFrees)
}

// unknownNote says the counts of uses and accepted frees of addresses no
// recorded allocation covers, or "" when both are zero.
func unknownNote(uses, frees uint64) string {
	what := UnknownCounts(uses, frees)
	if what == "" {
		return ""
	}
	return fmt.Sprintf("unknown addresses: %s of device addresses no recorded allocation covers (memory allocated where the recorder cannot see, or given back to the driver and handed out again): races on it are not looked for",
		what)
}

// OverlapNote says how many recorded allocations overlapped one still live,
// when some did; "" otherwise. The trace missed those frees, so the
// program's later frees of the overlapped memory are not reported.
func (a *Analysis) OverlapNote() string {
	n := a.Totals().OverlappedAllocations
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("overlapped allocations: %s made over memory still live in the trace (a free the recorder did not see, or a device reset): their frees are not checked",
		Plural(n, "allocation"))
}

// DamageNote says where a damaged trace stopped and how much of it was
// analyzed: "t.sctrace: offset 1234: trace truncated: ...; analyzed 812
// events before it".
func DamageNote(res *checker.Result) string {
	return FormatDamage(res.Trace, res.Damage, "analyzed", res.Stats.Events)
}

// FormatDamage gives the damage note of a trace; verb says what was done to
// the events before the damage.
func FormatDamage(trace string, damage error, verb string, events uint64) string {
	where := damage.Error()
	if !strings.HasPrefix(where, trace) {
		where = trace + ": " + where
	}
	return fmt.Sprintf("%s; %s %s before it", where, verb, Plural(events, "event"))
}

// DroppedNote warns that the recorder could not record every call of a
// trace; "" when it could.
func DroppedNote(res *checker.Result) string {
	if res.Tables == nil || res.Tables.Dropped == 0 {
		return ""
	}
	return fmt.Sprintf("%s: the recorder dropped %s; findings may be incomplete", res.Trace, Plural(res.Tables.Dropped, "event"))
}

// Plural counts words: "1 event", "2 events".
func Plural[N int | uint64](n N, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// UnknownCounts says how many uses and accepted frees named addresses no
// recorded allocation covers ("3 uses and 1 free", "2 frees"), "" for none.
func UnknownCounts(uses, frees uint64) string {
	switch {
	case uses == 0 && frees == 0:
		return ""
	case frees == 0:
		return Plural(uses, "use")
	case uses == 0:
		return Plural(frees, "free")
	}
	return Plural(uses, "use") + " and " + Plural(frees, "free")
}
