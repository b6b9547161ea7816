package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "reg")
	if err := os.WriteFile(reg, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(reg, link); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}

	data, cut, err := ReadFile(reg, 4)
	if err != nil || string(data) != "0123" || !cut {
		t.Errorf("bounded read: %q, %v, %v", data, cut, err)
	}
	data, cut, err = ReadFile(reg, 100)
	if err != nil || string(data) != "0123456789" || cut {
		t.Errorf("whole read: %q, %v, %v", data, cut, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, p := range []string{link, zero, fifo, dir, "/dev/null"} {
			if _, _, err := ReadFile(p, 100); !errors.Is(err, ErrNotOwned) {
				t.Errorf("%s: err = %v, want ErrNotOwned", p, err)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("blocked (on the FIFO?)")
	}
	if _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}

// A file another user owns is refused (/etc/passwd is root's; skipped when
// the tests run as root).
func TestOpenOtherOwner(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root")
	}
	if _, err := Open("/etc/passwd"); !errors.Is(err, ErrNotOwned) {
		t.Errorf("/etc/passwd: err = %v, want ErrNotOwned", err)
	}
}
