// Package sharedtest finds the shared/ tree (the seeds, their examples and
// the AOS schema) for the tests that need it: WARDEN_SHARED names it. It is
// for tests only.
package sharedtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Path returns the path of rel inside the shared/ tree named by
// WARDEN_SHARED; without the variable the test skips with one line saying
// so, and with it a missing file fails the test where it is read.
func Path(t testing.TB, rel ...string) string {
	t.Helper()
	dir := os.Getenv("WARDEN_SHARED")
	if dir == "" {
		t.Skip("needs shared/ (the seeds and the AOS schema): set WARDEN_SHARED")
	}
	return filepath.Join(append([]string{dir}, rel...)...)
}
