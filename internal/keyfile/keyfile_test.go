package keyfile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestLoad(t *testing.T) {
	spec := func(dir string) Spec {
		return Spec{Dir: dir, Name: "x.key", Size: 16, What: "x key", Lost: "x is lost"}
	}
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string)
		wantErr string
	}{
		{"created", nil, ""},
		{"kept", func(t *testing.T, path string) { write(t, path, bytes.Repeat([]byte{9}, 16), 0o600) }, ""},
		{"readable by others", func(t *testing.T, path string) { write(t, path, bytes.Repeat([]byte{9}, 16), 0o644) }, "run: chmod 600"},
		{"short", func(t *testing.T, path string) { write(t, path, []byte{1, 2}, 0o600) }, "is not 16 bytes; remove it to create a new one (x is lost)"},
		{"long", func(t *testing.T, path string) { write(t, path, bytes.Repeat([]byte{1}, 17), 0o600) }, "is not 16 bytes"},
		{"a directory", func(t *testing.T, path string) { os.Mkdir(path, 0o700) }, "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "x.key")
			if tt.prepare != nil {
				tt.prepare(t, path)
			}
			key, err := Load(spec(dir))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(key) != 16 {
				t.Fatalf("key %d bytes, %v", len(key), err)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("key file %v %v", fi, err)
			}
			again, err := Load(spec(dir))
			if err != nil || !bytes.Equal(key, again) {
				t.Fatalf("second load: %v", err)
			}
		})
	}
}

// Processes creating the key at once agree on one.
func TestLoadConcurrent(t *testing.T) {
	dir := t.TempDir()
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := Load(Spec{Dir: dir, Name: "x.key", Size: 32, What: "x key"})
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		}()
	}
	wg.Wait()
	for _, k := range keys[1:] {
		if !bytes.Equal(k, keys[0]) {
			t.Fatal("two keys")
		}
	}
}

func write(t *testing.T, path string, b []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, b, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
