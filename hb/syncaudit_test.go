package hb_test

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// auditState is a small program's trace: streams of every kind with work,
// a recorded event, an executable graph launched once that waits on an
// external event, a recorded write of a value, and, with peer, a
// synchronous peer copy; every join the engine can make has something to
// join after it.
const auditState = `{"op":"stream_create","stream":"s1"}
{"op":"stream_create","stream":"nb","flags":"non_blocking"}
{"op":"event_create","event":"e"}
{"op":"event_create","event":"ext"}
{"op":"launch","stream":"nb","kernel":"k"}
{"op":"event_record","event":"ext","stream":"nb"}
{"op":"capture_begin","stream":"nb"}
{"op":"stream_wait_event","stream":"nb","event":"ext","external":true}
{"op":"capture_end","stream":"nb","graph":"g"}
{"op":"graph_instantiate","graph":"g","exec":"x"}
{"op":"graph_launch","stream":"nb","exec":"x"}
{"op":"stream_mem_op","stream":"nb","ptr":"0x7f0000000000","mem_op":"write32","value":1}
{"op":"launch","stream":"legacy","kernel":"k"}
{"op":"launch","stream":"per_thread","kernel":"k"}
{"op":"launch","stream":"s1","kernel":"k"}
{"op":"event_record","event":"e","stream":"s1"}
{"op":"launch","stream":"s1","kernel":"k"}
{"op":"launch","stream":"nb","kernel":"k"}
`

const auditPeerCopy = `{"op":"memcpy","dst":"0x7f1000000000","src":"0x7f2000000000","size":16,"kind":"d2d","peer_src":0,"peer_dst":1}
{"op":"launch","stream":"nb","kernel":"k"}
`

// auditEngine returns an engine that applied auditState (and the peer copy
// with peer), and the events it applied, for their handles.
func auditEngine(t *testing.T, peer bool) (*hb.Engine, []model.Event) {
	t.Helper()
	text := auditState
	if peer {
		text += auditPeerCopy
	}
	r := model.NewJSONLReader(strings.NewReader(text), "audit.jsonl")
	e := hb.New()
	var evs []model.Event
	for {
		var ev model.Event
		err := r.Next(&ev)
		if err == io.EOF {
			return e, evs
		}
		if err != nil {
			t.Fatal(err)
		}
		e.Apply(&ev)
		evs = append(evs, ev)
	}
}

// auditVariants returns op in every form the engine tells apart: on each
// kind of stream, with each copy kind and host memory, succeeding or not
// ready, a peer copy, a wait for the recorded value.
func auditVariants(op model.Op, evs []model.Event) []model.Event {
	s1, nb, ev, exec := evs[0].Stream, evs[1].Stream, evs[2].Event, evs[9].Exec
	base := model.Event{Op: op, Event: ev, Exec: exec, TID: evs[0].TID, Ptr: 0x7f0000000000, Src: 0x7f3000000000, Size: 16,
		MemOp: model.MemOpWait32, Value: 1}
	var out []model.Event
	for _, stream := range []uint64{s1, nb, model.StreamLegacy, model.StreamPerThread} {
		for _, kind := range []model.MemcpyKind{model.CopyH2D, model.CopyD2H, model.CopyD2D, model.CopyH2H, model.CopyDefault} {
			for _, flags := range []uint32{0, model.FlagPageable, model.FlagPinned, model.FlagPeer} {
				for _, result := range []int32{model.ResultSuccess, model.ResultNotReady} {
					v := base
					v.Stream, v.Kind, v.Flags, v.Result = stream, kind, flags, result
					if flags == model.FlagPeer {
						v.PeerSrc, v.PeerDst = 0, 1
					}
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// TestSyncAuditCoversJoins applies every op, in every form, to the audit
// state and checks that each join the engine makes for it has a row of
// the sync audit (model/syncaudit.go) covering the op, and that each
// row's ops are ones the engine orders so: an ordering no documented
// promise or recorded evidence backs fails here.
func TestSyncAuditCoversJoins(t *testing.T) {
	seen := map[string]map[model.Op]bool{}
	for _, spec := range model.OpSpecs() {
		for _, peer := range []bool{false, true} {
			_, evs := auditEngine(t, peer)
			for _, v := range auditVariants(spec.Op, evs) {
				e, _ := auditEngine(t, peer)
				v.Seq = uint64(len(evs) + 1)
				st := e.Apply(&v)
				for _, j := range st.Joins() {
					why := j.Why.String()
					if seen[why] == nil {
						seen[why] = map[model.Op]bool{}
					}
					seen[why][spec.Op] = true
				}
			}
		}
	}
	rows := model.SyncAudit()
	var missing []string
	for why, ops := range seen {
		for op := range ops {
			covered := false
			for _, p := range rows {
				covered = covered || p.Order == why && p.Covers(op)
			}
			if !covered {
				missing = append(missing, fmt.Sprintf("%s by %s", op, why))
			}
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("the engine orders %s, and the sync audit has no row for it: add one to model/syncaudit.go", m)
	}
	for _, p := range rows {
		if p.Order == model.OrderFreeWaits {
			continue // the checker's (TestSyncAuditCoversFrees)
		}
		if p.OnStream && !anyOnStream(seen[p.Order]) {
			t.Errorf("audit row %q covers every op on a stream, but the engine made that join for none", p.Order)
		}
		for _, op := range p.Ops {
			if !seen[p.Order][op] {
				t.Errorf("audit row %q names %s, which the engine never orders so", p.Order, op)
			}
		}
	}
}

func anyOnStream(ops map[model.Op]bool) bool {
	for op := range ops {
		if op.OnStream() {
			return true
		}
	}
	return false
}
