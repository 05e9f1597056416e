package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrOpenPermissions is wrapped by the error of Open and OpenReadOnly for a
// data directory, or a trace file in it, that group or others may access:
// records hold what agents sent, so the directory must be 0700 and its
// files 0600 (Open creates them so).
var ErrOpenPermissions = errors.New("accessible by group or others")

// traceFiles are the files of a data directory whose mode is checked: the
// database, its WAL and shared memory, the blob file, the redaction key
// (package redact) and the checkpoints' signing key (sign.go).
var traceFiles = []string{FileName, FileName + "-wal", FileName + "-shm", BlobFileName, "trace.key", SignKeyFile}

// checkPrivate refuses a data directory dir (absolute) that is not a
// directory or that group or others may access, and any existing trace
// file in it that they may access, naming the path and the fix. An empty
// directory (just made with mkdir, or a test's temporary directory) holds
// nothing yet: with tighten, it is made 0700 instead of refused.
func checkPrivate(dir string, tighten bool) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("sqlite: data directory %s is not a directory", dir)
	}
	if m := fi.Mode().Perm(); m&0o077 != 0 && tighten && isEmpty(dir) {
		if err := os.Chmod(dir, m&0o700); err != nil {
			return fmt.Errorf("sqlite: data directory %s is %w (mode %04o) and could not be made private (%v): run chmod 700 %s", dir, ErrOpenPermissions, m, err, dir)
		}
	} else if m&0o077 != 0 {
		return fmt.Errorf("sqlite: data directory %s is %w (mode %04o); the trace holds what agents sent: run chmod 700 %s", dir, ErrOpenPermissions, m, dir)
	}
	for _, name := range traceFiles {
		p := filepath.Join(dir, name)
		fi, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("sqlite: %w", err)
		}
		if m := fi.Mode().Perm(); fi.Mode().IsRegular() && m&0o077 != 0 {
			return fmt.Errorf("sqlite: trace file %s is %w (mode %04o); run chmod 600 %s", p, ErrOpenPermissions, m, p)
		}
	}
	return nil
}

// isEmpty reports whether dir has no entries.
func isEmpty(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	return len(names) == 0
}
