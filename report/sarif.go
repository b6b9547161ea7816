package report

import (
	"bytes"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/streamcheck/streamcheck/baseline"
	"github.com/streamcheck/streamcheck/checker"
)

const (
	toolName = "streamcheck"
	toolURI  = "https://github.com/streamcheck/streamcheck"
	// fingerprintKey names streamcheck's partial fingerprint, the one
	// baselines use too (see package baseline).
	fingerprintKey = baseline.FingerprintKey
)

// SARIF is a SARIF 2.1.0 log with one run: every rule, every finding, and
// a notification per unreadable or damaged trace. Absolute paths under
// Options.Root become relative URIs. Results are encoded one at a time as
// they are written.
type SARIF struct{}

// Format writes the SARIF log of a to w.
func (SARIF) Format(w io.Writer, a *Analysis, o *Options) error {
	uris := &uriCache{root: o.Root, uris: map[string]string{}}
	run := sarif.NewRunWithInformationURI(toolName, toolURI)
	if v := o.ToolVersion; v != "" && run.Tool != nil && run.Tool.Driver != nil {
		run.Tool.Driver.WithSemanticVersion(strings.TrimPrefix(v, "v")) // code scanning shows which streamcheck ran
	}
	for _, r := range rules() {
		run.AddRule(r.id).
			WithName(ruleName(r.id)).
			WithDescription(r.doc).
			WithHelp(sarif.NewMultiformatMessageString().WithText(r.helpText).WithMarkdown(r.helpMarkdown)).
			WithDefaultConfiguration(sarif.NewReportingConfiguration().WithLevel(sarifLevel(r.severity)))
	}
	run.AddInvocation(sarifInvocation(a, uris))
	rep := sarif.NewReport()
	rep.AddRun(run)
	// The log without results, whose "results": [] the results then
	// replace, each made and encoded in its turn (as PrettyWrite would
	// encode it inside the log).
	var doc bytes.Buffer
	if err := rep.PrettyWrite(&doc); err != nil {
		return err
	}
	doc.WriteString("\n")
	return spliceArray(w, doc.Bytes(), "\n      \"results\": []", "      ", true, nil, func(yield func(any) bool) {
		for _, res := range a.Results {
			for _, f := range res.Findings {
				if !yield(sarifResult(run, f, uris)) {
					return
				}
			}
		}
	})
}

func sarifResult(run *sarif.Run, f *checker.Finding, uris *uriCache) *sarif.Result {
	res := sarif.NewRuleResult(f.Rule).
		WithRuleIndex(run.GetRuleIndex(f.Rule)).
		WithLevel(sarifLevel(f.Severity)).
		WithMessage(sarif.NewTextMessage(sarifText(f))).
		WithOccurrenceCount(f.Count).
		WithAnalysisTarget(sarif.NewSimpleArtifactLocation(uris.uri(f.Trace))).
		WithPartialFingerprints(map[string]string{fingerprintKey: baseline.Fingerprint(f)})
	if f.Allocations > 0 || len(f.Also) > 0 {
		// occurrenceCount says how often; these, on what and as what.
		props := sarif.NewPropertyBag()
		if f.Allocations > 0 {
			props.Add("allocations", f.Allocations)
			if f.AllocationsAtLeast {
				props.Add("allocationsAtLeast", true)
			}
		}
		if len(f.Also) > 0 {
			props.Add("alsoRules", f.Also)
		}
		res.WithProperties(props)
	}

	primary := &f.Ops[0]
	if loc := opLocation(primary, uris); loc != nil {
		res.AddLocation(loc.WithMessage(sarif.NewTextMessage(primary.Role + ": " + describeOp(primary))))
	} else {
		// No source location was recorded: point at the trace, so the
		// result still has the location code-scanning services require.
		res.AddLocation(sarif.NewLocationWithPhysicalLocation(
			sarif.NewPhysicalLocation().WithArtifactLocation(sarif.NewSimpleArtifactLocation(uris.uri(f.Trace)))).
			WithMessage(sarif.NewTextMessage(fmt.Sprintf("%s: %s (no source location was recorded)", primary.Role, describeOp(primary)))))
	}

	// The other operation and the allocation, each once.
	related := make([]*checker.Op, 0, len(f.Ops))
	for i := range f.Ops[1:] {
		related = append(related, &f.Ops[1+i])
	}
	if f.Alloc != nil && f.Alloc.Seq != primary.Seq && !containsSeq(related, f.Alloc.Seq) {
		related = append(related, &f.Alloc.Op)
	}
	id := 1
	add := func(op *checker.Op, message string) {
		if loc := opLocation(op, uris); loc != nil {
			res.AddRelatedLocation(loc.WithID(id).WithMessage(sarif.NewTextMessage(message)))
			id++
		}
	}
	// A graph launch's node: the line in the graph that made the use.
	addGraphNode := func(op *checker.Op) {
		if n := op.GraphNode; n != nil {
			add(n, op.Role+", in the graph: "+describeOp(n))
		}
	}
	addGraphNode(primary)
	for _, op := range related {
		add(op, op.Role+": "+describeOp(op))
		addGraphNode(op)
	}
	return res
}

func containsSeq(ops []*checker.Op, seq uint64) bool {
	for _, o := range ops {
		if o.Seq == seq {
			return true
		}
	}
	return false
}

// sarifText is the result message: what, why, and how to fix it.
func sarifText(f *checker.Finding) string {
	var b strings.Builder
	b.WriteString(f.Message)
	b.WriteString(".")
	if f.Why != "" {
		b.WriteString("\nWhy: " + f.Why)
	}
	if f.Fix != "" {
		b.WriteString("\nFix: " + f.Fix)
	}
	return b.String()
}

// opLocation returns the location of the frame the report names for an
// operation (Op.SiteFrame: in a Python program the program's own innermost
// Python function, not the library code under it), or of the innermost frame
// naming a file after it; nil if none does. A location without a line
// starts at line 1, so that code scanning can show it.
func opLocation(o *checker.Op, uris *uriCache) *sarif.Location {
	i := o.SiteFrame()
	if i < 0 {
		return nil
	}
	for _, fr := range o.Stack[i:] {
		if fr.File == "" {
			continue
		}
		pl := sarif.NewPhysicalLocation().WithArtifactLocation(sarif.NewSimpleArtifactLocation(uris.uri(fr.File)))
		pl.WithRegion(sarif.NewRegion().WithStartLine(max(fr.Line, 1)))
		return sarif.NewLocationWithPhysicalLocation(pl)
	}
	return nil
}

// uriCache makes each file's URI once (FileURI): findings name the same
// files over and over, and a relative path costs a system call. It forgets
// everything when it holds maxURIs, so that a report of findings each in a
// file of its own does not keep them all.
type uriCache struct {
	root string
	uris map[string]string
}

const maxURIs = 4096

func (c *uriCache) uri(path string) string {
	u, ok := c.uris[path]
	if !ok {
		u = FileURI(path, c.root)
		if len(c.uris) == maxURIs {
			clear(c.uris)
		}
		c.uris[path] = u
	}
	return u
}

// FileURI is how SARIF reports name a file: a URI relative to root where
// the path is under root, else a file:// URI. A relative path is taken as
// relative to the current directory, as check and run write them.
func FileURI(path, root string) string {
	p := filepath.Clean(path)
	if !filepath.IsAbs(p) {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
	}
	if filepath.IsAbs(p) {
		if rel, err := filepath.Rel(root, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return escapePath(rel)
		}
		return "file://" + escapePath(p)
	}
	return escapePath(p)
}

func escapePath(p string) string {
	return (&url.URL{Path: filepath.ToSlash(p)}).EscapedPath()
}

func sarifLevel(s checker.Severity) string {
	switch s {
	case checker.SeverityError:
		return sarif.LevelError
	case checker.SeverityNote:
		return sarif.LevelNote
	}
	return sarif.LevelWarning
}

// ruleName turns a rule id into the PascalCase name SARIF viewers show:
// "use-before-alloc" becomes "UseBeforeAlloc".
func ruleName(id string) string {
	var b strings.Builder
	for _, part := range strings.Split(id, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// sarifInvocation records whether every input could be read, with a
// notification for each that could not, and for each damaged trace.
func sarifInvocation(a *Analysis, uris *uriCache) *sarif.Invocation {
	inv := sarif.NewInvocation().WithExecutionSuccessful(len(a.Unreadable) == 0)
	if a.Program != nil {
		// The program's own status, so that a failed program and one
		// with findings read apart whatever streamcheck exited with.
		inv.WithExitCode(a.Program.ExitCode).WithExitCodeDescription(a.Program.Status())
		for _, n := range a.Program.Notes() {
			inv.AddToolExecutionNotification(sarif.NewNotification().
				WithLevel(sarif.LevelWarning).
				WithMessage(sarif.NewTextMessage(n)))
		}
	}
	if n := a.LiveNote(); n != "" { // leaks are results only with --leak-check full
		inv.AddToolExecutionNotification(sarif.NewNotification().
			WithLevel(sarif.LevelNote).
			WithMessage(sarif.NewTextMessage(n)))
	}
	for _, err := range a.Unreadable {
		inv.AddToolExecutionNotification(sarif.NewNotification().
			WithLevel(sarif.LevelError).
			WithMessage(sarif.NewTextMessage(err.Error())))
	}
	for _, res := range a.Results {
		trace := sarif.NewLocationWithPhysicalLocation(
			sarif.NewPhysicalLocation().WithArtifactLocation(sarif.NewSimpleArtifactLocation(uris.uri(res.Trace))))
		if res.Damage != nil {
			inv.AddToolExecutionNotification(sarif.NewNotification().
				WithLevel(sarif.LevelWarning).
				WithMessage(sarif.NewTextMessage(DamageNote(res))).
				AddLocation(trace))
		}
		if n := DroppedNote(res); n != "" {
			inv.AddToolExecutionNotification(sarif.NewNotification().
				WithLevel(sarif.LevelWarning).
				WithMessage(sarif.NewTextMessage(n)).
				AddLocation(trace))
		}
	}
	return inv
}
