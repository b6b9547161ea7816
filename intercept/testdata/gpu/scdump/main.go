// Command scdump prints a trace one event per line, with the first frames
// of each stack, for eyeballing the shim's output on a GPU machine
// (see ../run.sh). Build: go build -o scdump ./intercept/testdata/gpu/scdump
package main

import (
	"fmt"
	"os"

	"github.com/streamcheck/streamcheck/model"
)

func main() {
	for _, path := range os.Args[1:] {
		dump(path)
	}
}

func dump(path string) {
	r, c, err := model.Open(path)
	if err != nil {
		fmt.Println(path, err)
		return
	}
	defer c.Close()
	fmt.Println("==", path)
	var ev model.Event
	for {
		err := r.Next(&ev)
		if err != nil {
			fmt.Println("end:", err)
			break
		}
		t := r.Tables()
		line := fmt.Sprintf("%d %s tid=%d dev=%d api=%s", ev.Seq, ev.Op, ev.TID, ev.Device, t.String(ev.API))
		if ev.Result != 0 {
			line += fmt.Sprintf(" result=%d", ev.Result)
		}
		add := func(name string, v uint64) {
			if v != 0 {
				line += fmt.Sprintf(" %s=%#x", name, v)
			}
		}
		add("stream", ev.Stream)
		add("event", ev.Event)
		add("ptr", ev.Ptr)
		add("size", ev.Size)
		add("src", ev.Src)
		add("kind", uint64(ev.Kind))
		add("flags", uint64(ev.Flags))
		add("pool", ev.Pool)
		if ev.Prio != 0 {
			line += fmt.Sprintf(" prio=%d", ev.Prio)
		}
		if ev.Kernel != 0 {
			line += " kernel=" + t.String(ev.Kernel)
		}
		if len(ev.Ptrs) > 0 {
			line += fmt.Sprintf(" ptrs=%#x", ev.Ptrs)
		}
		st := t.Stack(ev.Stack)
		for i, f := range st {
			if i == 3 {
				break
			}
			m := t.Module(f.Module)
			line += fmt.Sprintf(" | %#x %s+%#x", f.PC, t.String(m.Path), f.PC-m.Base)
		}
		if len(st) > 3 {
			line += fmt.Sprintf(" | (%d frames)", len(st))
		}
		fmt.Println(line)
	}
	t := r.Tables()
	fmt.Printf("process pid=%d ppid=%d exe=%s version=%q; end: %d events, %d dropped; %d strings, %d stacks, %d modules\n",
		t.Process.PID, t.Process.PPID, t.String(t.Process.Exe), t.String(t.Process.Version), t.Events, t.Dropped,
		len(t.Strings)-1, len(t.Stacks)-1, len(t.Modules)-1)
}
