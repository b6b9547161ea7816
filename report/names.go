package report

import (
	"strings"

	"github.com/streamcheck/streamcheck/checker"
)

// maxTemplateArgs is the longest template argument list a text report
// prints in a frame's function name; longer ones become "<…>". PyTorch's
// dispatcher frames carry lists of several hundred characters
// (c10::impl::wrap_kernel_functor_unboxed_<...>::call) that say nothing the
// neighbouring frames do not. JSON, SARIF and JUnit keep full names.
const maxTemplateArgs = 40

// elideTemplates shortens each outermost template argument list in name
// that is longer than maxTemplateArgs to "<…>". Operator names (operator<,
// operator<<, operator->, ...) are left alone, and so is a name whose
// brackets do not balance.
func elideTemplates(name string) string {
	if len(name) <= maxTemplateArgs || !strings.Contains(name, "<") {
		return name
	}
	var b strings.Builder
	depth, open := 0, 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		if strings.HasSuffix(name[:i], "operator") {
			// Copy the operator's own angle brackets (and '-' of "->").
			j := i
			for j < len(name) && strings.IndexByte("<>=-", name[j]) >= 0 {
				j++
			}
			if j > i {
				if depth == 0 {
					b.WriteString(name[i:j])
				}
				i = j - 1
				continue
			}
		}
		switch c {
		case '<':
			if depth == 0 {
				open = i
			}
			depth++
			continue
		case '>':
			depth--
			if depth < 0 {
				return name
			}
			if depth == 0 {
				if args := name[open+1 : i]; len(args) > maxTemplateArgs {
					b.WriteString("<…>")
				} else {
					b.WriteString(name[open : i+1])
				}
			}
			continue
		}
		if depth == 0 {
			b.WriteByte(c)
		}
	}
	if depth != 0 {
		return name
	}
	return b.String()
}

// shortFrame is fr with its function name shortened for a text report.
func shortFrame(fr checker.Frame) checker.Frame {
	fr.Func = elideTemplates(fr.Func)
	return fr
}
