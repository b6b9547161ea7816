package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
)

// TestUnknownAddressUses: the uses of addresses no recorded allocation
// covered are summed over the traces into the JSON summary and a line of
// the text report, which says nothing of them when there were none.
func TestUnknownAddressUses(t *testing.T) {
	a := &Analysis{Results: []*checker.Result{
		{Trace: "a.sctrace", Stats: checker.Stats{UnknownAddressUses: 2}},
		{Trace: "b.sctrace", Stats: checker.Stats{UnknownAddressUses: 1}},
	}}
	txt := formatText(t, a)
	if !strings.Contains(txt, "unknown addresses: 3 uses of device addresses") {
		t.Errorf("text report lacks the unknown addresses line:\n%s", txt)
	}
	var doc struct {
		Summary struct {
			Unknown *uint64 `json:"unknown_address_uses"`
		} `json:"summary"`
		Traces []struct {
			Unknown uint64 `json:"unknown_address_uses"`
		} `json:"traces"`
	}
	formatJSON(t, a, &doc)
	if doc.Summary.Unknown == nil || *doc.Summary.Unknown != 3 || len(doc.Traces) != 2 || doc.Traces[0].Unknown != 2 {
		t.Errorf("JSON: summary %v, traces %+v: want 3 in all, 2 in the first", doc.Summary.Unknown, doc.Traces)
	}
	a.Results[0].Stats.UnknownAddressUses, a.Results[1].Stats.UnknownAddressUses = 0, 0
	txt = formatText(t, a)
	if strings.Contains(txt, "unknown addresses") {
		t.Errorf("text report names unknown addresses when there were none:\n%s", txt)
	}
}

// TestUnknownAddressFrees: accepted frees of addresses no recorded
// allocation started at are summed into the JSON summary and named in the
// text report's unknown addresses line beside the uses.
func TestUnknownAddressFrees(t *testing.T) {
	a := &Analysis{Results: []*checker.Result{
		{Trace: "a.sctrace", Stats: checker.Stats{UnknownAddressFrees: 2}},
		{Trace: "b.sctrace", Stats: checker.Stats{UnknownAddressUses: 1, UnknownAddressFrees: 1}},
	}}
	txt := formatText(t, a)
	if !strings.Contains(txt, "unknown addresses: 1 use and 3 frees of device addresses") {
		t.Errorf("text report lacks the unknown frees:\n%s", txt)
	}
	var doc struct {
		Summary struct {
			Frees *uint64 `json:"unknown_address_frees"`
		} `json:"summary"`
	}
	formatJSON(t, a, &doc)
	if doc.Summary.Frees == nil || *doc.Summary.Frees != 3 {
		t.Errorf("JSON summary unknown_address_frees = %v, want 3", doc.Summary.Frees)
	}
}

// formatText is a's text report.
func formatText(t *testing.T, a *Analysis) string {
	t.Helper()
	var b bytes.Buffer
	if err := (Text{}).Format(&b, a, &Options{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// formatJSON decodes a's JSON report into doc.
func formatJSON(t *testing.T, a *Analysis, doc any) {
	t.Helper()
	var b bytes.Buffer
	if err := (JSON{}).Format(&b, a, &Options{}); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b.Bytes(), doc); err != nil {
		t.Fatal(err)
	}
}
