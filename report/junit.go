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
	// junitClass is the classname of the testcases that are not findings.
	junitClass = "streamcheck"
	// JUnitReadCase names the testcase that passes when a trace was read
	// completely, and errs when it was damaged or could not be read.
	JUnitReadCase = "read-trace"
)

// JUnit is a JUnit XML report for CI systems that show test results: one
// testsuite per trace (named by the trace file) with one testcase per
// finding, named by its message, whose classname is the rule and the
// source file of its first operation ("use-after-free: app.cu"), so that CI
// groups findings by rule and file. An error finding's testcase fails; its
// failure holds the finding's text report. A warning's or a note's
// testcase passes, with its text report as system-out: the testcase's name
// shows it in the list of tests. The failures of a report are then its
// error findings, and its tests the findings plus a read-trace testcase per
// trace, which errs when the trace was damaged; an unreadable input is a
// testsuite whose read-trace has the reason. Each testsuite's properties
// count its errors, warnings and notes as the text report does.
//
// The report has no timings (time="0.000"), so that the same traces give
// the same file.
type JUnit struct{}

// Format writes the JUnit report of a to w.
func (JUnit) Format(w io.Writer, a *Analysis, _ *Options) error {
	suites := junit.Testsuites{Name: toolName}
	for _, res := range a.Results {
		suites.AddSuite(junitSuite(res, len(suites.Suites)))
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
// when the shim could not record; with nothing recorded it passes, saying
// so in its system-out and in the suite's "recorded" property.
func junitProgramSuite(p *Program, id int) junit.Testsuite {
	s := junit.Testsuite{Name: "program", ID: id, Time: junitTime}
	s.AddProperty("exit_code", fmt.Sprint(p.ExitCode))
	s.AddProperty("recorded", fmt.Sprint(p.Recorded))
	exit := junit.Testcase{Name: "exit-code", Classname: junitClass, Time: junitTime,
		SystemOut: &junit.Output{Data: p.Status()}}
	if f := p.Failure(); f != "" {
		exit.Failure = &junit.Result{Message: f, Type: "exit-code"}
	}
	s.AddTestcase(exit)
	rec := junit.Testcase{Name: "recording", Classname: junitClass, Time: junitTime}
	switch {
	case len(p.NotRecorded) > 0:
		rec.Error = &junit.Result{Message: xmlText(strings.Join(p.NotRecorded, "; ")), Type: "not-recorded"}
	case !p.Recorded:
		rec.SystemOut = &junit.Output{Data: NoCUDAActivity}
	}
	s.AddTestcase(rec)
	return s
}

// junitSuite is a trace's testsuite.
func junitSuite(res *checker.Result, id int) junit.Testsuite {
	s := junit.Testsuite{Name: res.Trace, ID: id, Time: junitTime, File: res.Trace}
	errs, warns, notes := countSeverities(res.Findings)
	s.AddProperty("errors", fmt.Sprint(errs))
	s.AddProperty("warnings", fmt.Sprint(warns))
	s.AddProperty("notes", fmt.Sprint(notes))
	s.AddProperty("events", fmt.Sprint(res.Stats.Events))
	s.AddProperty("allocations", fmt.Sprint(res.Stats.Allocations))
	s.AddProperty("streams", fmt.Sprint(res.Stats.Streams))
	s.AddProperty("threads", fmt.Sprint(res.Stats.Threads))
	s.AddProperty("live_at_exit", fmt.Sprint(res.Stats.LiveAtExit))
	s.AddProperty("live_bytes_at_exit", fmt.Sprint(res.Stats.LiveBytesAtExit))

	plain := newPalette(false)
	for _, f := range res.Findings {
		var body bytes.Buffer
		writeFinding(&body, f, false, plain)
		tc := junit.Testcase{Name: xmlText(f.Message), Classname: xmlText(junitClassname(f)), Time: junitTime}
		if f.Severity == checker.SeverityError {
			tc.Failure = &junit.Result{Message: xmlText(f.Message), Type: f.Rule, Data: xmlText(body.String())}
		} else {
			tc.SystemOut = &junit.Output{Data: xmlText(body.String())}
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

// junitClassname is a finding's rule and the source file of its first
// operation's call site ("use-after-free: app.cu"), or the rule alone when
// no source file was recorded.
func junitClassname(f *checker.Finding) string {
	if len(f.Ops) > 0 {
		op := &f.Ops[0]
		if i := op.SiteFrame(); i >= 0 && op.Stack[i].File != "" {
			return f.Rule + ": " + op.Stack[i].File
		}
	}
	return f.Rule
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
