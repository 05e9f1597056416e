package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/wardenhq/warden/seal"
)

// TestMain gives the package's tests a sealing KEK file of their own
// ($WARDEN_SEAL_KEK_FILE, unless set): a test that records with sealing
// on (the default) never creates or reads the user's
// ~/.config/warden/seal.kek.
func TestMain(m *testing.M) {
	os.Exit(func() int {
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
	}())
}
