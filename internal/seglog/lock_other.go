//go:build !unix

package seglog

import (
	"fmt"
	"os"
	"path/filepath"
)

// syncDir does nothing: directories cannot be synced on this platform.
func syncDir(*os.File) error { return nil }

// lockDir opens dir/LOCK without locking it (no flock on this platform).
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("seglog: %w", err)
	}
	return f, nil
}
