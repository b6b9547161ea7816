package report

import (
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fatih/color"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/hb"
)

// maxFrames bounds the stack frames printed per operation; the innermost
// ones say where the call was made, the rest is usually main's callers.
const maxFrames = 6

// Text is the human-readable report: the findings, errors first and notes
// last (at most Options.PrintLimit of them in full, unless it is 0), notes
// on damaged traces, a table of findings per rule and one of the traces,
// then a summary: with LeakCheck "summary", a line saying how much
// stream-ordered memory was live at exit (when some was), one counting
// uses of unknown addresses (when there were some), a line counting the
// findings and, for a run, the program's exit status. Options.Color colors it.
type Text struct{}

// Format writes the text report of a to w.
func (Text) Format(w io.Writer, a *Analysis, o *Options) error {
	ew := &errWriter{w: w}
	writeText(ew, a, newPalette(o.Color), o.PrintLimit)
	if o.Elapsed > 0 && len(a.Results) > 0 {
		t := a.Totals()
		fmt.Fprintf(ew, "analyzed in %s, %s events/s\n", o.Elapsed.Round(time.Millisecond), rate(t.Events, o.Elapsed))
	}
	return ew.err
}

// rate is n events over d, a second, as a short figure: "812", "45.3k",
// "2.1M".
func rate(n uint64, d time.Duration) string {
	r := float64(n) / d.Seconds()
	switch {
	case r >= 1e6:
		return strconv.FormatFloat(r/1e6, 'f', 1, 64) + "M"
	case r >= 1e4:
		return strconv.FormatFloat(r/1e3, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(r, 'f', 0, 64)
}

// errWriter keeps the first error of a writer and writes nothing after it,
// so that code printing with fmt need not check each call.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func writeText(w io.Writer, a *Analysis, p *palette, limit int) {
	multi := len(a.Results) > 1
	all := sortedFindings(a)
	shown := all
	if limit > 0 && len(all) > limit {
		shown = all[:limit]
	}
	// Sections are separated by blank lines.
	started := false
	section := func() {
		if started {
			fmt.Fprintln(w)
		}
		started = true
	}
	for _, f := range shown {
		section()
		writeFinding(w, f, multi, p)
	}
	if len(a.Results) == 0 {
		// Nothing could be read (stderr says why), or nothing recorded.
		if a.Program != nil {
			section()
			fmt.Fprintln(w, a.Program.Status())
		}
		return
	}
	if rest := len(all) - len(shown); rest > 0 {
		section()
		fmt.Fprintf(w, "... and %s (use --print-limit 0 for all)\n", Plural(rest, "more finding"))
	}
	damaged := false
	for _, res := range a.Results {
		if res.Damage != nil {
			if !damaged {
				section()
				damaged = true
			}
			fmt.Fprintf(w, "%s %s\n", p.note.Sprint("damaged:"), DamageNote(res))
		}
		if n := DroppedNote(res); n != "" {
			if !damaged {
				section()
				damaged = true
			}
			fmt.Fprintf(w, "%s %s\n", p.note.Sprint("incomplete:"), n)
		}
	}
	t := a.Totals()
	anyFindings := t.Errors+t.Warnings+t.Notes+t.Suppressed+t.Baselined > 0
	if anyFindings {
		section()
		writeRuleTable(w, a, p)
	}
	if anyFindings || multi {
		section()
		writeTraceTable(w, a, p)
	}
	section()
	if n := a.LiveNote(); n != "" {
		fmt.Fprintln(w, p.note.Sprint(n))
	}
	if n := a.UnknownNote(); n != "" {
		fmt.Fprintln(w, p.note.Sprint(n))
	}
	if n := a.OverlapNote(); n != "" {
		fmt.Fprintln(w, p.note.Sprint(n))
	}
	stats := fmt.Sprintf("in %s (%s, %s, %s)", Plural(t.Traces, "trace"), Plural(t.Events, "event"),
		Plural(t.Allocations, "allocation"), Plural(t.Streams, "stream"))
	var accepted []string
	if t.Suppressed > 0 {
		accepted = append(accepted, fmt.Sprintf("%d suppressed", t.Suppressed))
	}
	if t.Baselined > 0 {
		accepted = append(accepted, fmt.Sprintf("%d in the baseline", t.Baselined))
	}
	if len(accepted) > 0 {
		stats += "; " + strings.Join(accepted, ", ")
	}
	notes := ""
	if t.Notes > 0 {
		notes = ", " + p.note.Sprint(Plural(t.Notes, "note"))
	}
	switch {
	case t.Errors+t.Warnings == 0 && t.Notes == 0:
		fmt.Fprintf(w, "no findings %s\n", stats)
	case t.Errors+t.Warnings == 0:
		fmt.Fprintf(w, "no errors or warnings%s %s\n", notes, stats)
	case t.Errors > 0:
		fmt.Fprintf(w, "%s, %s%s %s\n", p.error.Sprint(Plural(t.Errors, "error")), Plural(t.Warnings, "warning"), notes, stats)
	default:
		fmt.Fprintf(w, "0 errors, %s%s %s\n", p.warning.Sprint(Plural(t.Warnings, "warning")), notes, stats)
	}
	if a.Program != nil {
		fmt.Fprintln(w, a.Program.Status())
	}
}

// sortedFindings returns the reported findings, errors first, otherwise in
// trace order and, within a trace, in the checker's order.
func sortedFindings(a *Analysis) []*checker.Finding {
	var all []*checker.Finding
	for _, res := range a.Results {
		all = append(all, res.Findings...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Severity > all[j].Severity })
	return all
}

// writeRuleTable writes a row per rule that has findings: its severity, the
// findings reported, how often they occurred (a finding repeated in a loop
// is one finding), and, when there are any, how many findings were
// suppressed or in the baseline.
func writeRuleTable(w io.Writer, a *Analysis, p *palette) {
	type row struct {
		sev                                       checker.Severity
		findings, occurrences, suppressed, inBase int
	}
	rows := map[string]*row{}
	var order []string
	get := func(f *checker.Finding) *row {
		r := rows[f.Rule]
		if r == nil {
			r = &row{sev: f.Severity}
			rows[f.Rule] = r
			order = append(order, f.Rule)
		}
		return r
	}
	for _, res := range a.Results {
		for _, f := range res.Findings {
			r := get(f)
			r.findings++
			r.occurrences += max(f.Count, 1)
		}
	}
	for _, f := range a.Suppressed {
		get(f).suppressed++
	}
	for _, f := range a.Baselined {
		get(f).inBase++
	}
	// Rules in the checker's order; any other after them, as met.
	rank := map[string]int{}
	all := rules()
	for i, r := range all {
		rank[r.id] = i - len(all)
	}
	sort.SliceStable(order, func(i, j int) bool { return rank[order[i]] < rank[order[j]] })

	header := []string{"rule", "severity", "findings", "occurrences"}
	showSupp, showBase := len(a.Suppressed) > 0, len(a.Baselined) > 0
	if showSupp {
		header = append(header, "suppressed")
	}
	if showBase {
		header = append(header, "baselined")
	}
	tab := [][]string{header}
	for _, id := range order {
		r := rows[id]
		cells := []string{id, r.sev.String(), strconv.Itoa(r.findings), strconv.Itoa(r.occurrences)}
		if showSupp {
			cells = append(cells, strconv.Itoa(r.suppressed))
		}
		if showBase {
			cells = append(cells, strconv.Itoa(r.inBase))
		}
		tab = append(tab, cells)
	}
	writeTable(w, tab, 2, func(row, col int, s string) string {
		switch {
		case row == 0:
			return p.dim.Sprint(s)
		case col == 1 && rows[order[row-1]].sev == checker.SeverityError:
			return p.error.Sprint(s)
		case col == 1 && rows[order[row-1]].sev == checker.SeverityNote:
			return p.note.Sprint(s)
		case col == 1:
			return p.warning.Sprint(s)
		}
		return s
	})
}

// writeTraceTable writes what was analyzed (events, allocations, streams,
// host threads) and the findings reported: a row per trace when there are
// several, and a total row. A single trace is only the total row, so that
// the report does not depend on the trace's name, as elsewhere.
func writeTraceTable(w io.Writer, a *Analysis, p *palette) {
	tab := [][]string{{"trace", "events", "allocations", "streams", "threads", "findings"}}
	if len(a.Results) > 1 {
		for _, res := range a.Results {
			tab = append(tab, []string{res.Trace,
				strconv.FormatUint(res.Stats.Events, 10), strconv.FormatUint(res.Stats.Allocations, 10),
				strconv.Itoa(res.Stats.Streams), strconv.Itoa(res.Stats.Threads), strconv.Itoa(len(res.Findings))})
		}
	}
	t := a.Totals()
	tab = append(tab, []string{"total",
		strconv.FormatUint(t.Events, 10), strconv.FormatUint(t.Allocations, 10),
		strconv.Itoa(t.Streams), strconv.Itoa(t.Threads), strconv.Itoa(t.Errors + t.Warnings + t.Notes)})
	writeTable(w, tab, 1, func(row, col int, s string) string {
		if row == 0 {
			return p.dim.Sprint(s)
		}
		return s
	})
}

// writeTable writes rows as columns two spaces apart: the first textCols
// columns left-aligned, the others (numbers) right-aligned. style colors a
// cell after it is padded.
func writeTable(w io.Writer, rows [][]string, textCols int, style func(row, col int, s string) string) {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for ri, r := range rows {
		var b strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			switch {
			case i >= textCols:
				b.WriteString(pad + style(ri, i, c))
			case i == len(r)-1:
				b.WriteString(style(ri, i, c)) // No trailing blanks.
			default:
				b.WriteString(style(ri, i, c) + pad)
			}
		}
		fmt.Fprintln(w, b.String())
	}
}

func writeFinding(w io.Writer, f *checker.Finding, withTrace bool, p *palette) {
	sev := p.warning.Sprint(f.Severity.String())
	switch f.Severity {
	case checker.SeverityError:
		sev = p.error.Sprint(f.Severity.String())
	case checker.SeverityNote:
		sev = p.note.Sprint(f.Severity.String())
	}
	fmt.Fprintf(w, "%s%s %s", sev, p.rule.Sprintf("[%s]", f.Rule), f.Message)
	if r := f.Repeats(); r != "" {
		fmt.Fprintf(w, " (%s)", r)
	}
	fmt.Fprintln(w)
	if withTrace {
		fmt.Fprintf(w, "  %s %s\n", p.label.Sprint("trace:"), f.Trace)
	}
	if f.Command != "" && interpreter.MatchString(filepath.Base(f.Exe)) {
		// The native stack shows the interpreter; the command names the script.
		fmt.Fprintf(w, "  %s %s (pid %d)\n", p.label.Sprint("process:"), f.Command, f.PID)
	}
	if f.Alloc != nil {
		fmt.Fprintf(w, "  %s %d bytes at 0x%x by %s\n", p.label.Sprint("allocation:"), f.Alloc.Size, f.Alloc.Ptr, describeOp(&f.Alloc.Op))
		writeFrames(w, &f.Alloc.Op, p)
		writeGraphNode(w, &f.Alloc.Op, p)
		writeImport(w, f, p)
	}
	for i := range f.Ops {
		op := &f.Ops[i]
		if f.Alloc != nil && op.Seq == f.Alloc.Seq {
			continue // The allocation line above is this call.
		}
		fmt.Fprintf(w, "  %s %s\n", p.label.Sprint(op.Role+":"), describeOp(op))
		writeFrames(w, op, p)
		writeGraphNode(w, op, p)
	}
	if f.Why != "" {
		fmt.Fprintf(w, "  %s %s\n", p.label.Sprint("why:"), f.Why)
	}
	if f.Fix != "" {
		fmt.Fprintf(w, "  %s %s\n", p.label.Sprint("fix:"), f.Fix)
	}
}

// writeImport names, under memory this process imported from another,
// both processes and the exporter's export call when its trace was
// analyzed too.
func writeImport(w io.Writer, f *checker.Finding, p *palette) {
	im := f.Alloc.Import
	if im == nil {
		return
	}
	if im.Export == nil {
		fmt.Fprintf(w, "  %s into pid %d from another process, whose trace was not analyzed with this one\n", p.label.Sprint("imported:"), f.PID)
		return
	}
	fmt.Fprintf(w, "  %s into pid %d from pid %d, exported by %s\n", p.label.Sprint("imported:"), f.PID, im.PID, describeOp(im.Export))
	writeFrames(w, im.Export, p)
}

// writeGraphNode names, under a graph launch, the operation captured into
// the graph (or node added to it) that made the use, free or allocation.
func writeGraphNode(w io.Writer, o *checker.Op, p *palette) {
	if o.GraphNode != nil {
		fmt.Fprintf(w, "    %s %s\n", p.label.Sprint("in the graph:"), describeOp(o.GraphNode))
	}
}

// describeOp says what a call was, where it ran and where it was made:
// "cudaLaunchKernel of scale on stream `s2` (non-blocking stream created at
// app.cu:6), tid 1, at app.cu:14", the stream by the program's name for it
// where known.
func describeOp(o *checker.Op) string {
	s := o.API
	if o.Kernel != "" {
		s += " of " + o.Kernel
	}
	kind := o.StreamKind
	if o.Device != nil {
		kind += fmt.Sprintf(" of device %d", *o.Device)
	}
	switch o.StreamKind {
	case "":
		if o.Stream != "" {
			s += " on stream " + o.Stream
		} else {
			s += " on the host"
		}
	case hb.KindLegacy.String(), hb.KindPerThread.String():
		s += " on the " + kind // Its name would only repeat this.
	default:
		name := o.Stream
		if o.StreamName != "" { // as the program names it
			name = "`" + o.StreamName + "`"
		}
		switch {
		case o.StreamFirstUsedAt != "": // its creation does not tell it apart
			s += fmt.Sprintf(" on stream %s (%s first used at %s)", name, kind, o.StreamFirstUsedAt)
		case o.StreamCreatedAt != "":
			s += fmt.Sprintf(" on stream %s (%s created at %s)", name, kind, o.StreamCreatedAt)
		default:
			s += fmt.Sprintf(" on stream %s (%s)", name, kind)
		}
	}
	var site string
	if i := o.SiteFrame(); i >= 0 {
		site = shortFrame(o.Stack[i]).String()
	} else {
		site = o.Site() // no stack: the call's number
	}
	return fmt.Sprintf("%s, tid %d, at %s", s, o.TID, site)
}

// interpreter matches the programs whose command line, not their stack,
// says which code ran: Python and other script interpreters.
var interpreter = regexp.MustCompile(`^(python|pypy|ruby|node|perl|java)[0-9.]*$`)

// writeFrames prints, below an operation's site (already printed on the
// operation's line), the frames between the site and the CUDA call when the
// site is not the innermost frame (a Python function's library calls), from
// the site down, then the site's callers, innermost first.
func writeFrames(w io.Writer, o *checker.Op, p *palette) {
	site := o.SiteFrame()
	if site < 0 {
		return
	}
	inner := make([]checker.Frame, 0, site)
	for i := site - 1; i >= 0; i-- {
		inner = append(inner, o.Stack[i])
	}
	// The first few frames below a Python function say which library
	// call it made (THPVariable_mul: a "*"); the rest are the library's.
	writeFrameList(w, p, "through", inner, maxInnerFrames)
	writeFrameList(w, p, "from", o.Stack[site+1:], maxFrames)
}

// maxInnerFrames is how many frames below a site writeFrames prints.
const maxInnerFrames = 3

// writeFrameList prints frames, one a line after word, up to limit.
func writeFrameList(w io.Writer, p *palette, word string, frames []checker.Frame, limit int) {
	for i, fr := range frames {
		if i == limit {
			fmt.Fprintln(w, p.dim.Sprintf("      ... %s", Plural(len(frames)-limit, "more frame")))
			return
		}
		fmt.Fprintln(w, p.dim.Sprintf("      %s %s", word, shortFrame(fr)))
	}
}

// palette holds the colors of the text report; each is disabled, whatever
// the global color.NoColor says, when the report must be plain.
type palette struct {
	error, warning, rule, label, dim, note *color.Color
}

func newPalette(enabled bool) *palette {
	p := &palette{
		error:   color.New(color.FgRed, color.Bold),
		warning: color.New(color.FgYellow, color.Bold),
		rule:    color.New(color.Bold),
		label:   color.New(color.FgCyan),
		dim:     color.New(color.Faint),
		note:    color.New(color.FgMagenta),
	}
	for _, c := range []*color.Color{p.error, p.warning, p.rule, p.label, p.dim, p.note} {
		if enabled {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
	}
	return p
}
