package guardian_test

import (
	"os"
	"testing"

	"github.com/wardenhq/warden/seal/sealtest"
)

// TestMain gives the package's tests a sealing KEK file of their own
// (sealtest.Main).
func TestMain(m *testing.M) { os.Exit(sealtest.Main(m)) }
