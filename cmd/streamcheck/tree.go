package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// defaultGrace is how long record and run wait, after the program exited,
// for the processes it left running (--grace): long enough for a
// background job or a daemon that finishes its work, short enough that a
// server that never exits costs a CI job seconds, not its time limit.
const defaultGrace = 10 * time.Second

// graceHelp documents --grace.
const graceHelp = "after the program exits, wait up to `DURATION` for the processes it left running (a & job, a daemon), whose traces are analyzed too; 0: do not wait"

// becomeSubreaper makes streamcheck the parent of every process of the
// program's tree whose own parent exits (PR_SET_CHILD_SUBREAPER), so that
// waitDescendants can wait for them. Where the kernel refuses, only the
// program itself is waited for.
func becomeSubreaper() {
	unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// waitDescendants waits, once the program itself exited, until no child
// of streamcheck is left (its tree's orphans became streamcheck's
// children), reaping each, or until grace has passed; signals from sigs
// are passed on to the children meanwhile. It returns the children still
// running when it stopped waiting.
func waitDescendants(grace time.Duration, sigs <-chan os.Signal) []child {
	deadline := time.Now().Add(grace)
	delay := time.Millisecond
	for {
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil { // ECHILD: the whole tree has exited.
				return nil
			}
			if pid == 0 {
				break // Children run, none has exited.
			}
		}
		if !time.Now().Before(deadline) {
			return children()
		}
		select {
		case s := <-sigs:
			if !fromTerminal(s) {
				for _, ch := range children() {
					syscall.Kill(ch.pid, s.(syscall.Signal))
				}
			}
		case <-time.After(min(delay, time.Until(deadline))):
			delay = min(2*delay, 50*time.Millisecond)
		}
	}
}

// child is a child process of streamcheck.
type child struct {
	pid  int
	name string // Its command name (comm).
}

func (c child) String() string {
	if c.name == "" {
		return strconv.Itoa(c.pid)
	}
	return fmt.Sprintf("%d (%s)", c.pid, c.name)
}

// children lists streamcheck's child processes, by pid, from /proc.
func children() []child {
	self := os.Getpid()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []child
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // Exited meanwhile.
		}
		// "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses.
		s := string(b)
		open, shut := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || shut < open {
			continue
		}
		f := strings.Fields(s[shut+1:])
		if len(f) < 2 || f[1] != strconv.Itoa(self) || f[0] == "Z" {
			continue
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(s[:open]))
		out = append(out, child{pid, s[open+1 : shut]})
	}
	slices.SortFunc(out, func(a, b child) int { return a.pid - b.pid })
	return out
}

// leftRunning says which processes the program left running when
// streamcheck stopped waiting for them.
func leftRunning(left []child, grace time.Duration) string {
	names := make([]string, 0, min(len(left), 10))
	for i, c := range left {
		if i == 10 {
			names = append(names, fmt.Sprintf("and %d more", len(left)-10))
			break
		}
		names = append(names, shown(c.String()))
	}
	return fmt.Sprintf("stopped waiting after %v (--grace) for the program's processes still running: %s; "+
		"a trace they are still writing is analyzed as far as it was written",
		grace, strings.Join(names, ", "))
}
