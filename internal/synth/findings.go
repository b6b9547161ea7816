package synth

import (
	"bufio"
	"fmt"
	"io"
)

// WriteUseAfterFree writes a JSON Lines trace in which n allocations on one
// stream are each freed and then used by a kernel launch on the stream:
// n distinct use-after-free findings, each allocated, freed and used from
// call sites of its own (a line of a file of its own), under callers that
// all findings share, as in a program whose every layer has the bug.
// Reports of it measure what a report costs per finding.
func WriteUseAfterFree(w io.Writer, n int) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, `{"op":"stream_create","stream":"s1","flags":"non_blocking","site":"app.cu:5"}`)
	const callers = `"Layer::forward /src/model/layer.cu:210","Model::forward /src/model/model.cu:88","Trainer::step /src/train/trainer.cu:140","Trainer::run /src/train/trainer.cu:60","main /src/train/main.cu:31","__libc_start_main"`
	for i := range n {
		ptr := 0x7f0000000000 + uint64(i)<<20
		file := fmt.Sprintf("/src/ops/op%d.cu", i)
		fmt.Fprintf(bw, `{"op":"malloc_async","stream":"s1","ptr":"0x%x","size":4096,"stack":["op%d_alloc %s:%d",%s]}`+"\n", ptr, i, file, 10, callers)
		fmt.Fprintf(bw, `{"op":"free_async","stream":"s1","ptr":"0x%x","stack":["op%d_release %s:%d",%s]}`+"\n", ptr, i, file, 20, callers)
		fmt.Fprintf(bw, `{"op":"launch","stream":"s1","kernel":"op%d_kernel","ptrs":["0x%x"],"stack":["op%d_run %s:%d",%s]}`+"\n", i, ptr, i, file, 30, callers)
	}
	return bw.Flush()
}
