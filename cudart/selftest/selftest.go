package selftest

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/streamcheck/streamcheck/analysis"
	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/cudart"
	"github.com/streamcheck/streamcheck/model"
)

// TouchPTX is the self-test kernel, touch(u64 ptr, u32 n), which sets
// ptr[i] = i (32-bit) for every i < n. It is PTX ISA 7.0 for sm_70, which
// the driver JIT-compiles for any newer GPU.
//
//go:embed touch.ptx
var TouchPTX string

// KernelName is the .entry name of the kernel in TouchPTX.
const KernelName = "touch"

const (
	elements  = 1 << 16 // Threads launched; 4 bytes each.
	blockSize = 256
)

// Case is one self-test program.
type Case struct {
	Name string
	// Doc says what the program does, in one line.
	Doc string
	// Expect lists the rules the checker must report; any other finding,
	// warnings included, fails the case. Empty for a correct program.
	Expect []string
	// steps are what the program does after its first call,
	// cuMemAllocAsync on s1 (every case starts so), which returned p.
	steps func(s *fixture, p cudart.DevicePtr) []func() error
}

// Cases are the self-tests, in the order doctor runs them.
var Cases = []Case{
	{
		Name:   "use-before-alloc",
		Doc:    "cuMemAllocAsync on s1, kernel on s2 with no hand-off",
		Expect: []string{string(checker.RuleUseBeforeAlloc)},
		steps: func(s *fixture, p cudart.DevicePtr) []func() error {
			return []func() error{
				func() error { return s.launch(p, s.s2) },
				func() error { return s.d.StreamSynchronize(s.s2) },
				func() error { return s.d.MemFreeAsync(p, s.s1) },
				func() error { return s.d.StreamSynchronize(s.s1) },
			}
		},
	},
	{
		Name: "ok-event",
		Doc:  "the same, handed to s2 with an event and back to s1 with another before the free",
		steps: func(s *fixture, p cudart.DevicePtr) []func() error {
			return []func() error{
				func() error { return s.d.EventRecord(s.e1, s.s1) },
				func() error { return s.d.StreamWaitEvent(s.s2, s.e1) },
				func() error { return s.launch(p, s.s2) },
				func() error { return s.d.EventRecord(s.e2, s.s2) },
				func() error { return s.d.StreamWaitEvent(s.s1, s.e2) },
				func() error { return s.d.MemFreeAsync(p, s.s1) },
				func() error { return s.d.StreamSynchronize(s.s1) },
			}
		},
	},
	{
		Name:   "free-while-in-flight",
		Doc:    "handed to s2 with an event, kernel on s2, cuMemFreeAsync on s1 without waiting for it",
		Expect: []string{string(checker.RuleFreeWhileInFlight)},
		steps: func(s *fixture, p cudart.DevicePtr) []func() error {
			return []func() error{
				func() error { return s.d.EventRecord(s.e1, s.s1) },
				func() error { return s.d.StreamWaitEvent(s.s2, s.e1) },
				func() error { return s.launch(p, s.s2) },
				func() error { return s.d.MemFreeAsync(p, s.s1) },
				func() error { return s.d.StreamSynchronize(s.s1) },
				func() error { return s.d.StreamSynchronize(s.s2) },
			}
		},
	},
	{
		Name: "ok-sync",
		Doc:  "cuMemAllocAsync on s1, host waits for s1, kernel on s2, host waits for s2, free on s1",
		steps: func(s *fixture, p cudart.DevicePtr) []func() error {
			return []func() error{
				func() error { return s.d.StreamSynchronize(s.s1) },
				func() error { return s.launch(p, s.s2) },
				func() error { return s.d.StreamSynchronize(s.s2) },
				func() error { return s.d.MemFreeAsync(p, s.s1) },
				func() error { return s.d.StreamSynchronize(s.s1) },
			}
		},
	},
}

// Lookup returns the case with the given name.
func Lookup(name string) (*Case, error) {
	for i := range Cases {
		if Cases[i].Name == name {
			return &Cases[i], nil
		}
	}
	names := make([]string, len(Cases))
	for i, c := range Cases {
		names[i] = c.Name
	}
	return nil, fmt.Errorf("unknown self-test %q (have %s)", name, strings.Join(names, ", "))
}

// fixture is the CUDA state a case runs with: two non-blocking streams
// and two events on one device's primary context.
type fixture struct {
	d      *cudart.Driver
	fn     cudart.Function
	s1, s2 cudart.Stream
	e1, e2 cudart.Event
}

func (s *fixture) bytes() uint64 { return elements * 4 }

// launch runs touch(p, elements) on st.
func (s *fixture) launch(p cudart.DevicePtr, st cudart.Stream) error {
	ptr := uint64(p)
	n := uint32(elements)
	grid := cudart.Dim3{X: (elements + blockSize - 1) / blockSize, Y: 1, Z: 1}
	block := cudart.Dim3{X: blockSize, Y: 1, Z: 1}
	return s.d.LaunchKernel(s.fn, grid, block, 0, st, unsafe.Pointer(&ptr), unsafe.Pointer(&n))
}

// do runs steps in order and stops at the first error.
func (s *fixture) do(steps ...func() error) error {
	for _, f := range steps {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// Run performs the case named name on the device with the given ordinal,
// in this process, reporting progress to w. It is what the child process
// does; recording is up to whoever started it (the shim's environment).
func Run(name string, device int, w io.Writer) (err error) {
	c, err := Lookup(name)
	if err != nil {
		return err
	}
	// The current context belongs to the OS thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	d, err := cudart.Load()
	if err != nil {
		return err
	}
	if err := d.Init(); err != nil {
		return err
	}
	dev, err := d.Device(device)
	if err != nil {
		return err
	}
	ctx, err := d.PrimaryCtxRetain(dev)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, optional(d.PrimaryCtxRelease(dev))) }()
	if err := d.SetCurrent(ctx); err != nil {
		return err
	}
	mod, err := d.ModuleLoadData([]byte(TouchPTX))
	if err != nil {
		return fmt.Errorf("load the self-test kernel (PTX %s): %w", ptxTarget(), err)
	}
	defer func() { err = errors.Join(err, optional(d.ModuleUnload(mod))) }()
	s := &fixture{d: d}
	if s.fn, err = d.ModuleGetFunction(mod, KernelName); err != nil {
		return err
	}
	if s.s1, err = d.StreamCreate(cudart.StreamNonBlocking); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, d.StreamDestroy(s.s1)) }()
	if s.s2, err = d.StreamCreate(cudart.StreamNonBlocking); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, d.StreamDestroy(s.s2)) }()
	if s.e1, err = d.EventCreate(cudart.EventDisableTiming); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, d.EventDestroy(s.e1)) }()
	if s.e2, err = d.EventCreate(cudart.EventDisableTiming); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, d.EventDestroy(s.e2)) }()

	p, err := d.MemAllocAsync(s.bytes(), s.s1)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Name, err)
	}
	if err := s.do(c.steps(s, p)...); err != nil {
		return fmt.Errorf("%s: %w", c.Name, err)
	}
	// Surfaces a kernel fault, if any.
	if err := d.CtxSynchronize(); err != nil {
		return fmt.Errorf("%s: %w", c.Name, err)
	}
	fmt.Fprintf(w, "selftest %s: ran on device %d (%s)\n", c.Name, device, c.Doc)
	return nil
}

// ptxTarget returns the .version and .target of TouchPTX, for messages.
func ptxTarget() string {
	var parts []string
	for _, line := range strings.Split(TouchPTX, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, ".version") || strings.HasPrefix(line, ".target") {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, " ")
}

// TraceExt is the extension of the shim's trace files
// (streamcheck-PID.sctrace).
const TraceExt = ".sctrace"

// Options adjust Analyze.
type Options struct {
	// AllowTruncated accepts a trace that ends without its End record but
	// is otherwise whole, noting it in Verdict.Truncated: what a program
	// that cannot run library destructors at exit leaves (a streamcheck
	// built without cgo: see cudart.ExitRunsDestructors).
	AllowTruncated bool
}

// Verdict is the outcome of one case's trace.
type Verdict struct {
	Case string
	Pass bool
	// Truncated is set when a trace lacked its End record and
	// Options.AllowTruncated let it pass.
	Truncated bool
	// Found lists the distinct rules reported, sorted.
	Found []string
	// Reason says why the case failed; empty when it passed.
	Reason string
	// Results are the checker's analyses, one per trace file.
	Results []*checker.Result
}

// Analyze checks the traces the shim wrote into dir for case c.
func Analyze(c *Case, dir string) Verdict { return AnalyzeWith(c, dir, Options{}) }

// AnalyzeWith is Analyze with options.
func AnalyzeWith(c *Case, dir string, opts Options) Verdict {
	v := Verdict{Case: c.Name}
	traces, _ := filepath.Glob(filepath.Join(dir, "*"+TraceExt))
	sort.Strings(traces)
	if len(traces) == 0 {
		v.Reason = fmt.Sprintf("no trace (*%s) in %s: the CUDA driver did not load the shim, or the shim could not write there", TraceExt, dir)
		if notes := shimErrors(dir); notes != "" {
			v.Reason += "; the shim said: " + notes
		}
		return v
	}
	ins := make([]analysis.Input, len(traces))
	for i, path := range traces {
		ins[i] = analysis.FileInput(path, path)
	}
	an := analysis.Run(ins, analysis.Options{})
	if len(an.Unreadable) > 0 {
		v.Reason = fmt.Sprintf("read %v", an.Unreadable[0])
		return v
	}
	v.Results = an.Results
	var stats checker.Stats
	found := map[string]bool{}
	for _, res := range an.Results {
		switch {
		case res.Damage == nil:
		case opts.AllowTruncated && errors.Is(res.Damage, model.ErrTruncated):
			v.Truncated = true
		default:
			v.Reason = fmt.Sprintf("trace %s is damaged: %v", res.Trace, res.Damage)
		}
		stats.Allocations += res.Stats.Allocations
		stats.Frees += res.Stats.Frees
		stats.Uses += res.Stats.Uses
		for _, f := range res.Findings {
			found[f.Rule] = true
		}
	}
	for r := range found {
		v.Found = append(v.Found, r)
	}
	sort.Strings(v.Found)
	switch {
	case v.Reason != "":
	case stats.Allocations == 0:
		v.Reason = "the trace records no allocation: the shim did not see cuMemAllocAsync"
	case stats.Frees == 0:
		v.Reason = "the trace records no free: the shim did not see cuMemFreeAsync"
	case stats.Uses == 0:
		v.Reason = "the trace records no use of the allocation: the shim did not find the pointer among the kernel's arguments"
	default:
		want := slices.Clone(c.Expect)
		sort.Strings(want)
		if !slices.Equal(want, v.Found) {
			v.Reason = fmt.Sprintf("expected %s, found %s", ruleList(want), ruleList(v.Found))
		}
	}
	v.Pass = v.Reason == ""
	return v
}

func ruleList(rules []string) string {
	if len(rules) == 0 {
		return "no finding"
	}
	return strings.Join(rules, ", ")
}

// shimErrors returns the text of the error notes the shim leaves in its
// trace directory (streamcheck-*.error), shortened, or "".
func shimErrors(dir string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "streamcheck-*.error"))
	var notes []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		if len(s) > 500 {
			s = s[:500] + "..."
		}
		notes = append(notes, s)
	}
	return strings.Join(notes, "; ")
}

// optional drops the error of a clean-up call that an older driver does not
// export: the case ran all the same.
func optional(err error) error {
	if errors.Is(err, cudart.ErrNotExported) {
		return nil
	}
	return err
}
