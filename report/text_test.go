package report

import (
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
)

// An operation placed in a Python function lists the library calls below it
// ("through", from the function down, at most three) and its callers.
func TestWriteFramesBelowSite(t *testing.T) {
	op := &checker.Op{Stack: []checker.Frame{
		{Func: "at::native::launch"}, {Func: "at::_ops::mul::call"}, {Func: "THPVariable_mul"},
		{Func: "THPVariable_wrap"}, {Func: "py::step", File: "train.py"}, {Func: "py::main", File: "train.py"},
	}}
	var b strings.Builder
	writeFrames(&b, op, newPalette(false))
	want := "      through THPVariable_wrap\n      through THPVariable_mul\n      through at::_ops::mul::call\n" +
		"      ... 1 more frame\n      from py::main train.py\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
