package acsstate

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/conf"
	"github.com/wardenhq/warden/sigkey"
)

// decodeConfig decodes src as the acs: section of a config file in dir.
func decodeConfig(t *testing.T, dir, src string) (Config, string) {
	t.Helper()
	c := DefaultConfig()
	c.Dir = dir
	errs := conf.DecodeYAML(filepath.Join(dir, "w.yaml"), "acs", []byte(src), &c)
	return c, errs.Error()
}

// TestConfig: key material is decoded and never printed; key files are
// read relative to Dir; signatures are required once keys are set unless
// require_signatures says otherwise.
func TestConfig(t *testing.T) {
	dir := t.TempDir()
	k, err := sigkey.Generate(sigkey.MLDSA65, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sigkey.WriteKeyPair(k, filepath.Join(dir, "w"), false); err != nil {
		t.Fatal(err)
	}
	c, errs := decodeConfig(t, dir, "keys: {k1: \"hex:000102030405060708090a0b0c0d0e0f\", k2: \"a-secret-of-16-bytes\"}\nsigning: ML-DSA-65\nsigning_key: w\npublic_keys: {agent.1: w.pub}\ndefer: {max_per_session: 7}\n")
	if errs != "" {
		t.Fatal(errs)
	}
	if !c.RequireSignatures || c.Signing != sigkey.MLDSA65 || c.SigningKey == nil || string(c.SigningKeyFile) != filepath.Join(dir, "w") ||
		!c.PublicKeys["agent.1"].Equal(k.Public()) || len(c.Keys["k1"]) != 16 || c.Defer.MaxPerSession != 7 || strings.Join(c.KeyIDs(), ",") != "k1,k2" {
		t.Fatalf("decoded %v", c)
	}
	if s := fmt.Sprintf("%v %+v %#v %v %#v", c, c, c, c.Keys, c.Keys); strings.Contains(s, "a-secret") || strings.Contains(s, "[0 1 2") || !strings.Contains(s, "k2") {
		t.Fatalf("printed: %s", s)
	}
	if c, errs := decodeConfig(t, dir, "keys: {k1: \"a-secret-of-16-bytes\"}\nrequire_signatures: false\n"); errs != "" || c.RequireSignatures {
		t.Fatalf("require_signatures: false: %v %s", c, errs)
	}
	for _, tc := range []struct{ src, want string }{
		{"keys: {}", `w.yaml:1: acs.keys: expected a mapping of key ids to key material`},
		{"keys:\n  k1: \"a-secret-of-16-bytes\"\n  k2: short-secret\n", `w.yaml:3: acs.keys.k2: key material of 12 bytes; want at least 16`},
		{"signing_key: w\n", "w.yaml:1: acs.signing_key: needs acs.signing"},
		{"signing: ed25519\n", `w.yaml:1: acs.signing: expected ml-dsa-65 or slh-dsa-128s, got "ed25519"`},
		{"skew_window: 30m\n", "w.yaml:1: acs.replay_window: 10m must be at least acs.skew_window (30m)"},
	} {
		if _, errs := decodeConfig(t, dir, tc.src); !strings.Contains(errs, tc.want) || strings.Contains(errs, "short-secret") {
			t.Errorf("%q: got %s, want %s", tc.src, errs, tc.want)
		}
	}
}
