package safefile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// Output is a command's output file (the file an -o flag names) while it is
// written. A FIFO or a device (/dev/null, /dev/stdout, a FIFO a reader
// waits on, a terminal) is written in place and never replaced; any other
// path gets a new file under a temporary name beside it, renamed over the
// path by Commit, so that an output that fails halfway never replaces what
// was there.
type Output struct {
	*os.File
	path string // the path asked for
	dest string // the file the temporary one replaces; "" when written in place
}

// CreateOutput opens path to write a command's output into, as Output
// says. A new file is created with perm, less the umask; one that replaces
// an existing file keeps that file's permissions, at most perm. A symbolic
// link is followed: the file it names is replaced, not the link. A
// directory, or an existing file the user may not write, is refused.
// Errors name path.
func CreateOutput(path string, perm os.FileMode) (*Output, error) {
	st, err := os.Stat(path) // Follows links: /dev/stdout names a pipe or a terminal.
	switch {
	case err == nil && st.IsDir():
		return nil, &os.PathError{Op: "open", Path: path, Err: syscall.EISDIR}
	case err == nil && !st.Mode().IsRegular():
		// O_NOCTTY: a terminal named here must not become streamcheck's
		// controlling terminal. No O_TRUNC, no O_CREAT: the file stays.
		f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NOCTTY, 0)
		if err != nil {
			return nil, err
		}
		return &Output{File: f, path: path}, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	dest, existed := path, err == nil
	if existed {
		// An existing file: the user must be allowed to write it, as an
		// in-place write would require, and a link is replaced at its target.
		if err := unix.Access(path, unix.W_OK); err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		if real, err := filepath.EvalSymlinks(path); err == nil {
			dest = real
		}
		perm &= st.Mode().Perm()
	}
	f, err := createTemp(dest, perm)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: errors.Unwrap(err)}
	}
	if existed {
		// The umask may leave the new file more open than the old one.
		if err := f.Chmod(perm); err != nil {
			f.Close()
			os.Remove(f.Name())
			return nil, err
		}
	}
	return &Output{File: f, path: path, dest: dest}, nil
}

// createTemp creates a new file beside dest, with perm less the umask.
func createTemp(dest string, perm os.FileMode) (*os.File, error) {
	var b [6]byte
	for range 100 {
		rand.Read(b[:])
		name := filepath.Join(filepath.Dir(dest), "."+filepath.Base(dest)+".tmp"+hex.EncodeToString(b[:]))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, &os.PathError{Op: "open", Path: dest, Err: syscall.EEXIST}
}

// Temp returns the path of the temporary file that Commit renames into
// place, or "" when the output is written in place: what to remove should
// the process be ended before Commit.
func (o *Output) Temp() string {
	if o.dest == "" {
		return ""
	}
	return o.File.Name()
}

// Commit closes the output; a temporary file then replaces the path. On an
// error the temporary file is removed.
func (o *Output) Commit() error {
	err := o.File.Close()
	if o.dest == "" {
		return err
	}
	if err == nil {
		err = os.Rename(o.File.Name(), o.dest)
	}
	if err != nil {
		os.Remove(o.File.Name())
		return fmt.Errorf("%s: %w", o.path, err)
	}
	return nil
}

// Abort closes the output and removes a temporary file; a FIFO or device
// written in place stays as it is.
func (o *Output) Abort() {
	o.File.Close()
	if o.dest != "" {
		os.Remove(o.File.Name())
	}
}

// CheckOutput reports, without writing anything, whether CreateOutput could
// open path: a program that runs for hours must not find out only at its
// end that its report cannot be written. It never opens a FIFO, which would
// wait for a reader.
func CheckOutput(path string) error {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return &os.PathError{Op: "open", Path: path, Err: syscall.EISDIR}
	case err == nil:
		if err := unix.Access(path, unix.W_OK); err != nil {
			return &os.PathError{Op: "open", Path: path, Err: err}
		}
		if !st.Mode().IsRegular() {
			return nil
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	dest := path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		dest = real
	}
	f, err := createTemp(dest, 0o600)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: errors.Unwrap(err)}
	}
	f.Close()
	return os.Remove(f.Name())
}
