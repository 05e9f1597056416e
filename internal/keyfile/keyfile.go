// Package keyfile keeps a secret key in a file of the data directory:
// random bytes, mode 0600, created once and reused. The trace's redaction
// key (trace.key) and the console's session key (session.key) are such
// files.
package keyfile

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Spec names a key file and says what it is for, for error messages.
type Spec struct {
	// Dir and Name locate the file; Size is the key's size in bytes.
	Dir, Name string
	Size      int
	// What names the key in errors ("trace key"); Lost says what removing
	// it costs ("earlier tags will then not match later ones").
	What, Lost string
}

// Load returns the key in s.Dir/s.Name, creating it (s.Size bytes from
// crypto/rand, mode 0600) when there is none. A key file that group or
// others may access, or that is not s.Size bytes, is refused with an error
// naming the file and the fix. Two processes creating it at once agree on
// one key (it is written aside and linked into place).
func Load(s Spec) ([]byte, error) {
	path := filepath.Join(s.Dir, s.Name)
	for range 3 {
		key, err := s.read(path)
		if !errors.Is(err, os.ErrNotExist) {
			return key, err
		}
		if err := s.create(path); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%s: could not create the %s", path, s.What)
}

func (s Spec) read(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s %s is not a regular file", s.What, path)
	}
	if m := fi.Mode().Perm(); m&0o077 != 0 {
		return nil, fmt.Errorf("%s %s is accessible by group or others (mode %04o); run: chmod 600 %s", s.What, path, m, path)
	}
	key := make([]byte, s.Size+1)
	n, err := io.ReadFull(f, key)
	if n != s.Size || !errors.Is(err, io.ErrUnexpectedEOF) {
		msg := fmt.Sprintf("%s %s is not %d bytes; remove it to create a new one", s.What, path, s.Size)
		if s.Lost != "" {
			msg += " (" + s.Lost + ")"
		}
		return nil, errors.New(msg)
	}
	return key[:s.Size], nil
}

// create writes a fresh key beside path and links it into place; an
// existing key wins (os.ErrExist).
func (s Spec) create(path string) error {
	key := make([]byte, s.Size)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.Dir, s.Name+".*.tmp") // mode 0600
	if err != nil {
		return fmt.Errorf("create the %s: %w", s.What, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(key); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return os.ErrExist
		}
		return fmt.Errorf("create %s: %w", path, err)
	}
	if d, err := os.Open(s.Dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
