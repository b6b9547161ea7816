package safefile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ErrNotOwned is returned for a path that is not a regular file of the
// current user's: a symbolic link, a FIFO, a device, a directory, or a file
// another user owns.
var ErrNotOwned = errors.New("not a regular file owned by the current user")

// Open opens path for reading. It fails with an error wrapping ErrNotOwned
// unless path is a regular file the current user owns; a symbolic link is
// never followed (O_NOFOLLOW), and a FIFO or device is not waited on
// (O_NONBLOCK, cleared again once the file is known to be regular).
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, &os.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (a symbolic link)", ErrNotOwned)}
		}
		return nil, err
	}
	if err := check(f); err != nil {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if err := syscall.SetNonblock(int(f.Fd()), false); err != nil {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return f, nil
}

func check(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%w (%s)", ErrNotOwned, describe(st.Mode()))
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return fmt.Errorf("%w (owned by uid %d)", ErrNotOwned, sys.Uid)
	}
	return nil
}

func describe(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// ReadFile reads at most max bytes of the file at path, opened as Open
// does; truncated reports whether the file held more.
func ReadFile(path string, max int64) (data []byte, truncated bool, err error) {
	f, err := Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(data)) > max {
		return data[:max], true, nil
	}
	return data, false, nil
}
