package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// privateDir is a new temporary directory, mode 0700.
func privateDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestPermissions(t *testing.T) {
	// A directory Open creates is 0700 and its files 0600, whatever the umask.
	dir := filepath.Join(t.TempDir(), "data")
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Record(context.Background(), testRecord("r1", time.Now())); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(dir)
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %04o", fi.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		fi, _ := e.Info()
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s mode %04o", e.Name(), fi.Mode().Perm())
		}
	}

	// An existing trace in an open directory is refused, with the fix.
	os.Chmod(dir, 0o755)
	for name, open := range map[string]func() error{
		"Open":         func() error { s, err := Open(dir, Options{}); closeIf(s); return err },
		"OpenReadOnly": func() error { s, err := OpenReadOnly(dir); closeIf(s); return err },
	} {
		err := open()
		if !errors.Is(err, ErrOpenPermissions) || !strings.Contains(err.Error(), "chmod 700 "+dir) {
			t.Errorf("%s of a 0755 directory: %v", name, err)
		}
	}
	os.Chmod(dir, 0o700)

	// A trace file others may read is refused, naming it.
	blobs := filepath.Join(dir, BlobFileName)
	os.Chmod(blobs, 0o644)
	if _, err := OpenReadOnly(dir); !errors.Is(err, ErrOpenPermissions) || !strings.Contains(err.Error(), "chmod 600 "+blobs) {
		t.Errorf("0644 blob file: %v", err)
	}
	os.Chmod(blobs, 0o600)
	s2, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()

	// An empty directory, as mkdir makes it, is made private.
	empty := filepath.Join(t.TempDir(), "new")
	os.Mkdir(empty, 0o755)
	os.Chmod(empty, 0o755)
	s3, err := Open(empty, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s3.Close()
	if fi, _ := os.Stat(empty); fi.Mode().Perm() != 0o700 {
		t.Errorf("empty directory left %04o", fi.Mode().Perm())
	}
}

func closeIf(s *Store) {
	if s != nil {
		s.Close()
	}
}
