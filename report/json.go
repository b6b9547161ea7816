package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"github.com/streamcheck/streamcheck/checker"
)

// JSONVersion is the version of the JSON report's schema
// (docs/json-report.md), its "version" field: it changes when a field
// changes meaning or type, not when one is added.
const JSONVersion = 1

// jsonReport is the --format json document: exactly one object.
type jsonReport struct {
	Version  int                `json:"version"`
	Findings []*checker.Finding `json:"findings"`
	Traces   []jsonTrace        `json:"traces"`
	// Unreadable lists the inputs that could not be read at all (exit 2),
	// so that a report file alone never reads as a clean run.
	Unreadable []string    `json:"unreadable"`
	Summary    jsonSummary `json:"summary"`
	// Program is how the program ended, in a report of streamcheck run.
	Program *Program `json:"program,omitempty"`
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
	Notes    int     `json:"notes"`
}

type jsonSummary struct {
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Notes    int `json:"notes"`
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
	// UnknownAddressUses counts the uses of device addresses no live
	// recorded allocation covered (checker.Stats.UnknownAddressUses).
	UnknownAddressUses uint64 `json:"unknown_address_uses"`
	// UnknownAddressFrees counts the accepted synchronous frees of
	// addresses no recorded allocation started at
	// (checker.Stats.UnknownAddressFrees).
	UnknownAddressFrees uint64 `json:"unknown_address_frees"`
	// OverlappedAllocations counts allocations recorded over memory still
	// live (checker.Stats.OverlappedAllocations).
	OverlappedAllocations uint64 `json:"overlapped_allocations"`
}

// JSON is the report as one JSON object: every finding, a summary of each
// trace, the inputs that could not be read, totals and (for a run) how the
// program ended. Findings are encoded one at a time as they are written.
type JSON struct{}

// Format writes the JSON report of a to w.
func (JSON) Format(w io.Writer, a *Analysis, _ *Options) error {
	rep := jsonReport{Version: JSONVersion, Findings: []*checker.Finding{}, Traces: []jsonTrace{}, Unreadable: []string{}}
	for _, err := range a.Unreadable {
		rep.Unreadable = append(rep.Unreadable, err.Error())
	}
	for _, res := range a.Results {
		t := jsonTrace{File: res.Trace, Stats: res.Stats}
		if res.Tables != nil {
			t.Dropped = res.Tables.Dropped
		}
		if res.Damage != nil {
			note := DamageNote(res)
			t.Damage = &note
		}
		t.Errors, t.Warnings, t.Notes = countSeverities(res.Findings)
		rep.Traces = append(rep.Traces, t)
	}
	tot := a.Totals()
	rep.Summary = jsonSummary{Errors: tot.Errors, Warnings: tot.Warnings, Notes: tot.Notes, Traces: tot.Traces, Damaged: tot.Damaged,
		Suppressed: tot.Suppressed, Baselined: tot.Baselined, LiveAtExit: tot.Live, LiveBytesAtExit: tot.LiveBytes,
		LeakCheck: a.leakMode(), UnknownAddressUses: tot.UnknownAddressUses, UnknownAddressFrees: tot.UnknownAddressFrees,
		OverlappedAllocations: tot.OverlappedAllocations}
	rep.Program = a.Program

	// The document without findings, whose "findings": [] the findings
	// then replace, each encoded as it would be inside the document.
	var doc bytes.Buffer
	if err := newJSONEncoder(&doc).Encode(rep); err != nil {
		return err
	}
	return spliceArray(w, doc.Bytes(), "\n  \"findings\": []", "  ", false, hexAddresses, func(yield func(any) bool) {
		for _, res := range a.Results {
			for _, f := range res.Findings {
				if !yield(f) {
					return
				}
			}
		}
	})
}

func newJSONEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // Messages are read by people, not embedded in HTML.
	enc.SetIndent("", "  ")
	return enc
}

// addressLine matches a line of an indented finding that holds an address
// (an allocation's or operation's ptr, a frame's pc, a stream's handle) as
// encoding/json writes a number: one key a line, so that no string value
// can match (a string cannot hold a raw newline or an unescaped quote).
var addressLine = regexp.MustCompile(`(?m)^(\s*"(?:ptr|pc|stream_handle)": )([0-9]+)(,?)$`)

// hexAddresses rewrites the addresses of an encoded finding as "0x..."
// strings, as the text report and traces write them: a JSON number loses
// the low bits of a 64-bit address in most JSON readers (float64).
func hexAddresses(b []byte) []byte {
	return addressLine.ReplaceAllFunc(b, func(line []byte) []byte {
		m := addressLine.FindSubmatch(line)
		n, err := strconv.ParseUint(string(m[2]), 10, 64)
		if err != nil {
			return line
		}
		return fmt.Appendf(nil, "%s\"0x%x\"%s", m[1], n, m[3])
	})
}
