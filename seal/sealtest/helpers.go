package sealtest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/wardenhq/warden/seal"
)

// TestKEK is the fixed key of NewSealer's KEK (tests only).
var TestKEK = []byte("0123456789abcdef0123456789abcdef")

// NewSealer returns a Sealer with a KEK of TestKEK's bytes over a new Mem:
// what a test that seals and opens values needs.
func NewSealer(t testing.TB) *seal.Sealer {
	t.Helper()
	kek, err := seal.NewKEK(TestKEK)
	if err != nil {
		t.Fatal(err)
	}
	s, err := seal.New(seal.Options{KEK: kek, Store: &Mem{}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Main runs a package's tests with a sealing KEK file of their own
// ($WARDEN_SEAL_KEK_FILE in a temporary directory, unless it is set), so
// that a test recording with sealing on (the default) never creates or
// reads the user's ~/.config/warden/seal.kek. A package uses it as
// func TestMain(m *testing.M) { os.Exit(sealtest.Main(m)) }.
func Main(m *testing.M) int {
	if os.Getenv(seal.KEKFileEnv) == "" {
		dir, err := os.MkdirTemp("", "warden-seal-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		os.Setenv(seal.KEKFileEnv, filepath.Join(dir, seal.KEKFileName))
	}
	return m.Run()
}
