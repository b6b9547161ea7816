package main

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// errDirInUse is returned by claimDir for a directory another streamcheck
// records into.
var errDirInUse = errors.New("is in use by another streamcheck record or run; give each run its own directory")

// claimDir creates the recording directory dir (0700) if needed and takes
// an exclusive lock on it for this run: a second record or run given the
// same directory is refused (errDirInUse) rather than mixing its traces
// with this one's and rewriting them under it. The lock is dropped by
// release, or when streamcheck ends; the program does not inherit it.
func claimDir(dir string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.Open(dir) // close-on-exec
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s %w", shown(dir), errDirInUse)
		}
		return nil, fmt.Errorf("lock %s: %w", shown(dir), err)
	}
	return func() { f.Close() }, nil
}
