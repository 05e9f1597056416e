//go:build unix

package seglog

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// syncDir fsyncs a directory, making its entries durable.
func syncDir(d *os.File) error { return d.Sync() }

// lockDir takes an exclusive flock on dir/LOCK, held until the file is
// closed, so that two processes never append to one log.
func lockDir(dir string) (*os.File, error) {
	p := filepath.Join(dir, "LOCK")
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("seglog: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("seglog: %s is locked by another process (%v)", p, err)
	}
	return f, nil
}
