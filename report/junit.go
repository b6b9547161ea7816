package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/streamcheck/streamcheck/checker"
)

const (
	// junitClass is every testcase's classname.
	junitClass = "streamcheck"
	// JUnitReadCase names the testcase that passes when a trace was read
	// completely, and errs when it was damaged or could not be read.
	JUnitReadCase = "read-trace"
)

// JUnit is a JUnit XML report for CI systems that show test results: one testsuite per trace (named by the trace file) with one
// testcase per rule of the checker, so that rules without findings show
// as passed tests, plus a read-trace testcase. A rule's testcase fails when
// the rule has error findings; the failure's message is the finding's (or
// says how many there are) and its body is the text report of every one of
// them. Warnings do not fail the testcase: their text report is its
// system-out. A damaged trace makes read-trace an error, with the damage
// note; an unreadable input is a testsuite whose read-trace has the reason.
//
// The report has no timings (time="0.000"), so that the same traces give
// the same file.
type JUnit struct{}

// Format writes the JUnit report of a to w.
func (JUnit) Format(w io.Writer, a *Analysis, _ *Options) error {
	suites := junit.Testsuites{Name: toolName}
	for _, res := range a.Results {
		suites.AddSuite(junitSuite(res, len(suites.Suites), a.leakMode() == "full"))
	}
	if a.Program != nil {
		suites.AddSuite(junitProgramSuite(a.Program, len(suites.Suites)))
	}
	for _, err := range a.Unreadable {
		name := err.Error()
		var ie InputError
		if errors.As(err, &ie) {
			name = ie.Input()
		}
		s := junit.Testsuite{Name: name, ID: len(suites.Suites), Time: junitTime}
		s.AddTestcase(junit.Testcase{Name: JUnitReadCase, Classname: junitClass, Time: junitTime,
			Error: &junit.Result{Message: xmlText(err.Error()), Type: "unreadable"}})
		suites.AddSuite(s)
	}
	suites.Time = junitTime
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	return suites.WriteXML(w)
}

const junitTime = "0.000"

// junitProgramSuite reports, for streamcheck run, how the program ended:
// "exit-code" fails when the program failed, and "recording" is an error
// when the shim could not record, skipped when there was nothing to record.
func junitProgramSuite(p *Program, id int) junit.Testsuite {
	s := junit.Testsuite{Name: "program", ID: id, Time: junitTime}
	s.AddProperty("exit_code", fmt.Sprint(p.ExitCode))
	exit := junit.Testcase{Name: "exit-code", Classname: junitClass, Time: junitTime}
	if f := p.Failure(); f != "" {
		exit.Failure = &junit.Result{Message: f, Type: "exit-code"}
	}
	s.AddTestcase(exit)
	rec := junit.Testcase{Name: "recording", Classname: junitClass, Time: junitTime}
	switch {
	case len(p.NotRecorded) > 0:
		rec.Error = &junit.Result{Message: xmlText(strings.Join(p.NotRecorded, "; ")), Type: "not-recorded"}
	case !p.Recorded:
		rec.Skipped = &junit.Result{Message: NoCUDAActivity}
	}
	s.AddTestcase(rec)
	return s
}

// junitSuite is a trace's testsuite; leaks says the leak rule was checked
// (--leak-check full); otherwise its testcase is skipped, saying how much
// stream-ordered memory was live at exit.
func junitSuite(res *checker.Result, id int, leaks bool) junit.Testsuite {
	s := junit.Testsuite{Name: res.Trace, ID: id, Time: junitTime, File: res.Trace}
	s.AddProperty("events", fmt.Sprint(res.Stats.Events))
	s.AddProperty("allocations", fmt.Sprint(res.Stats.Allocations))
	s.AddProperty("streams", fmt.Sprint(res.Stats.Streams))
	s.AddProperty("threads", fmt.Sprint(res.Stats.Threads))
	s.AddProperty("live_at_exit", fmt.Sprint(res.Stats.LiveAtExit))
	s.AddProperty("live_bytes_at_exit", fmt.Sprint(res.Stats.LiveBytesAtExit))

	byRule := map[string][]*checker.Finding{}
	for _, f := range res.Findings {
		byRule[f.Rule] = append(byRule[f.Rule], f)
	}
	plain := newPalette(false)
	for _, r := range rules() {
		tc := junit.Testcase{Name: r.id, Classname: junitClass, Time: junitTime}
		var errs, warns bytes.Buffer
		var errFindings []*checker.Finding
		for _, f := range byRule[r.id] {
			buf := &warns
			if f.Severity == checker.SeverityError {
				buf = &errs
				errFindings = append(errFindings, f)
			}
			if buf.Len() > 0 {
				buf.WriteString("\n")
			}
			writeFinding(buf, f, false, plain)
		}
		if len(errFindings) > 0 {
			msg := errFindings[0].Message
			if len(errFindings) > 1 {
				msg = fmt.Sprintf("%d findings; the first: %s", len(errFindings), msg)
			}
			tc.Failure = &junit.Result{Message: xmlText(msg), Type: r.id, Data: xmlText(errs.String())}
		}
		if warns.Len() > 0 {
			tc.SystemOut = &junit.Output{Data: xmlText(warns.String())}
		}
		if r.id == leakRule && !leaks {
			tc.Skipped = &junit.Result{Message: fmt.Sprintf("not checked without --leak-check full: %s, %s of stream-ordered memory live at exit",
				Plural(res.Stats.LiveAtExit, "allocation"), Plural(res.Stats.LiveBytesAtExit, "byte"))}
		}
		s.AddTestcase(tc)
	}

	read := junit.Testcase{Name: JUnitReadCase, Classname: junitClass, Time: junitTime}
	if res.Damage != nil {
		read.Error = &junit.Result{Message: xmlText(DamageNote(res)), Type: "damaged"}
	}
	s.AddTestcase(read)
	if n := DroppedNote(res); n != "" {
		s.SystemErr = &junit.Output{Data: xmlText(n)}
	}
	return s
}

// xmlText replaces the characters XML 1.0 cannot hold (most control
// characters; kernel names and paths come from the traced program) with
// U+FFFD.
func xmlText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t', r == '\n', r == '\r',
			r >= 0x20 && r <= 0xD7FF,
			r >= 0xE000 && r <= 0xFFFD,
			r >= 0x10000 && r <= 0x10FFFF:
			return r
		}
		return '\uFFFD'
	}, s)
}
