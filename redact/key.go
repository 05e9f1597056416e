package redact

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// KeyFileName is the file in the data directory that holds the HMAC key of
// the trace's redactions: KeySize random bytes, mode 0600, created once and
// reused, so the same secret gets the same tag in every record of the trace.
// Losing it only means that later tags differ from earlier ones.
const KeyFileName = "trace.key"

// LoadKey returns the key in dir/trace.key, creating it (KeySize bytes from
// crypto/rand, mode 0600) when there is none. A key file that group or
// others may access, or that is not KeySize bytes, is refused with an error
// naming the file and the fix. Two processes creating it at once agree on
// one key (it is written aside and linked into place).
func LoadKey(dir string) ([]byte, error) {
	path := filepath.Join(dir, KeyFileName)
	for range 3 {
		key, err := readKey(path)
		if !errors.Is(err, os.ErrNotExist) {
			return key, err
		}
		if err := createKey(dir, path); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("redact: %s: could not create the trace key", path)
}

func readKey(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("redact: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("redact: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("redact: trace key %s is not a regular file", path)
	}
	if m := fi.Mode().Perm(); m&0o077 != 0 {
		return nil, fmt.Errorf("redact: trace key %s is accessible by group or others (mode %04o); run: chmod 600 %s", path, m, path)
	}
	key := make([]byte, KeySize+1)
	n, err := io.ReadFull(f, key)
	if n != KeySize || !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("redact: trace key %s is not %d bytes; remove it to create a new one (earlier tags will then not match later ones)", path, KeySize)
	}
	return key[:KeySize], nil
}

// createKey writes a fresh key beside path and links it into place; an
// existing key wins (os.ErrExist).
func createKey(dir, path string) error {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return fmt.Errorf("redact: %w", err)
	}
	tmp, err := os.CreateTemp(dir, KeyFileName+".*.tmp") // mode 0600
	if err != nil {
		return fmt.Errorf("redact: create the trace key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(key); err != nil {
		tmp.Close()
		return fmt.Errorf("redact: write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("redact: write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("redact: write %s: %w", tmp.Name(), err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return os.ErrExist
		}
		return fmt.Errorf("redact: create %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
