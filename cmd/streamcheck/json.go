package main

import (
	"encoding/json"
	"io"

	"github.com/streamcheck/streamcheck/checker"
)

// jsonReport is the --format json document: exactly one object.
type jsonReport struct {
	Findings []*checker.Finding `json:"findings"`
	Traces   []jsonTrace        `json:"traces"`
	// Unreadable lists the inputs that could not be read at all (exit 2),
	// so that a report file alone never reads as a clean run.
	Unreadable []string    `json:"unreadable"`
	Summary    jsonSummary `json:"summary"`
	// Program is how the program ended, in a report of streamcheck run.
	Program *programOutcome `json:"program,omitempty"`
}

type jsonTrace struct {
	File string `json:"file"`
	checker.Stats
	// Dropped counts the calls the recorder could not record.
	Dropped uint64 `json:"dropped"`
	// Damage says where a truncated or corrupt trace stopped; null for a
	// complete one.
	Damage   *string `json:"damage"`
	Errors   int     `json:"errors"`
	Warnings int     `json:"warnings"`
	Notes    int     `json:"notes,omitempty"`
}

type jsonSummary struct {
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Notes    int `json:"notes,omitempty"`
	Traces   int `json:"traces"`
	Damaged  int `json:"damaged"`
	// Suppressed and Baselined count the findings left out by
	// --suppressions and by the baseline.
	Suppressed int `json:"suppressed"`
	Baselined  int `json:"baselined"`
	// LiveAtExit and LiveBytesAtExit count the stream-ordered allocations
	// live at the end of the complete traces, and their bytes, whatever
	// --leak-check says (full also makes them leak findings).
	LiveAtExit      uint64 `json:"live_at_exit"`
	LiveBytesAtExit uint64 `json:"live_bytes_at_exit"`
	// LeakCheck is --leak-check: full, summary or none.
	LeakCheck string `json:"leak_check"`
}

func writeJSON(w io.Writer, a *analysis) error {
	rep := jsonReport{Findings: []*checker.Finding{}, Traces: []jsonTrace{}, Unreadable: []string{}}
	for _, err := range a.unreadable {
		rep.Unreadable = append(rep.Unreadable, err.Error())
	}
	for _, res := range a.results {
		rep.Findings = append(rep.Findings, res.Findings...)
		t := jsonTrace{File: res.Trace, Stats: res.Stats}
		if res.Tables != nil {
			t.Dropped = res.Tables.Dropped
		}
		if res.Damage != nil {
			note := damageNote(res)
			t.Damage = &note
		}
		for _, f := range res.Findings {
			switch f.Severity {
			case checker.SeverityError:
				t.Errors++
			case checker.SeverityNote:
				t.Notes++
			default:
				t.Warnings++
			}
		}
		rep.Traces = append(rep.Traces, t)
	}
	tot := a.totals()
	rep.Summary = jsonSummary{Errors: tot.errors, Warnings: tot.warnings, Notes: tot.notes, Traces: tot.traces, Damaged: tot.damaged,
		Suppressed: tot.suppressed, Baselined: tot.baselined, LiveAtExit: tot.live, LiveBytesAtExit: tot.liveBytes,
		LeakCheck: a.leakMode()}
	rep.Program = a.program
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // Messages are read by people, not embedded in HTML.
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
