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
	var txt bytes.Buffer
	if err := (Text{}).Format(&txt, a, &Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(txt.String(), "unknown addresses: 3 uses of device addresses") {
		t.Errorf("text report lacks the unknown addresses line:\n%s", txt.String())
	}
	var js bytes.Buffer
	if err := (JSON{}).Format(&js, a, &Options{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Summary struct {
			Unknown *uint64 `json:"unknown_address_uses"`
		} `json:"summary"`
		Traces []struct {
			Unknown uint64 `json:"unknown_address_uses"`
		} `json:"traces"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Summary.Unknown == nil || *doc.Summary.Unknown != 3 || len(doc.Traces) != 2 || doc.Traces[0].Unknown != 2 {
		t.Errorf("JSON: summary %v, traces %+v: want 3 in all, 2 in the first", doc.Summary.Unknown, doc.Traces)
	}
	a.Results[0].Stats.UnknownAddressUses, a.Results[1].Stats.UnknownAddressUses = 0, 0
	txt.Reset()
	if err := (Text{}).Format(&txt, a, &Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(txt.String(), "unknown addresses") {
		t.Errorf("text report names unknown addresses when there were none:\n%s", txt.String())
	}
}
