package sealtest_test

import (
	"testing"

	"github.com/wardenhq/warden/seal"
	"github.com/wardenhq/warden/seal/sealtest"
)

func TestMemKeyStore(t *testing.T) {
	sealtest.RunKeyStore(t, func(*testing.T) seal.KeyStore { return &sealtest.Mem{} })
}
