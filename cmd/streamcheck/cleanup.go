package main

import (
	"errors"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// exitBrokenPipe is returned when stdout was a pipe its reader closed
// (streamcheck convert t.sctrace | head): main then dies of SIGPIPE, as a
// tool that writes to such a pipe does, with no message, since neither the
// input nor streamcheck is at fault.
const exitBrokenPipe = 128 + int(syscall.SIGPIPE)

// isBrokenPipe reports whether err is a write to a pipe with no reader.
func isBrokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }

// outputError is a failure to write a command's output: reported as such,
// never as a fault of the input being read.
type outputError struct{ err error }

func (e *outputError) Error() string { return "writing the output: " + e.err.Error() }
func (e *outputError) Unwrap() error { return e.err }

// dieOfSIGPIPE ends the process by SIGPIPE's default action.
func dieOfSIGPIPE() {
	signal.Reset(syscall.SIGPIPE)
	syscall.Kill(os.Getpid(), syscall.SIGPIPE)
	time.Sleep(time.Second) // The signal is delivered meanwhile.
	os.Exit(exitBrokenPipe)
}

// temporaries are the files that a command is writing and that must not
// outlive it: removed when SIGINT, SIGTERM or SIGHUP ends streamcheck,
// which then dies of that signal as it would have without them.
var temporaries struct {
	sync.Mutex
	paths    map[string]int
	watching bool
}

// removeOnSignal registers path for removal should a signal end
// streamcheck, until the returned function is called.
func removeOnSignal(path string) (forget func()) {
	t := &temporaries
	t.Lock()
	defer t.Unlock()
	if t.paths == nil {
		t.paths = map[string]int{}
	}
	t.paths[path]++
	if !t.watching {
		t.watching = true
		sigs := make(chan os.Signal, 1)
		// Signals ignored at the start (nohup) stay ignored.
		var watch []os.Signal
		for _, s := range []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
			if !signal.Ignored(s) {
				watch = append(watch, s)
			}
		}
		signal.Notify(sigs, watch...)
		go func() {
			s := <-sigs
			t.Lock() // Held to the end: no file is registered meanwhile.
			for p := range t.paths {
				os.Remove(p)
			}
			signal.Reset(s)
			syscall.Kill(os.Getpid(), s.(syscall.Signal))
			time.Sleep(time.Second)
			os.Exit(128 + int(s.(syscall.Signal)))
		}()
	}
	return func() {
		t.Lock()
		defer t.Unlock()
		if t.paths[path]--; t.paths[path] <= 0 {
			delete(t.paths, path)
		}
	}
}
