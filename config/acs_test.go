package config

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/acsstate"
)

func TestParseACS(t *testing.T) {
	t.Setenv("WARDEN_TEST_ACS_KEY", "a-long-enough-secret-key")
	ok := []struct {
		name, yaml string
		check      func(acsstate.Config) error
	}{
		{"defaults", "acs: {}\n", func(a acsstate.Config) error {
			if a.RequireSignatures || a.SkewWindow != 5*time.Minute || a.ReplayWindow != 10*time.Minute || a.Defer.MaxPerSession != 3 {
				return fmt.Errorf("%v", a)
			}
			return nil
		}},
		{"keys in three forms; signatures then required", "acs:\n  keys:\n    default: \"${WARDEN_TEST_ACS_KEY}\"\n    k1: \"hex:000102030405060708090a0b0c0d0e0f\"\n    k2: \"base64:AAECAwQFBgcICQoLDA0ODw==\"\n", func(a acsstate.Config) error {
			if !a.RequireSignatures || string(a.Keys["default"]) != "a-long-enough-secret-key" || len(a.Keys["k1"]) != 16 || a.Keys["k2"][15] != 15 {
				return fmt.Errorf("%v", a)
			}
			return nil
		}},
		{"signatures optional with keys", "acs:\n  keys: {default: \"0123456789abcdef\"}\n  require_signatures: false\n  skew_window: 30s\n  replay_window: 1h\n  defer: {max_per_session: 5}\n", func(a acsstate.Config) error {
			if a.RequireSignatures || a.SkewWindow != 30*time.Second || a.ReplayWindow != time.Hour || a.Defer.MaxPerSession != 5 {
				return fmt.Errorf("%v", a)
			}
			return nil
		}},
	}
	for _, tt := range ok {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("w.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.check(c.ACS); err != nil {
				t.Fatal(err)
			}
			if s := fmt.Sprintf("%v %#v %+v", c.ACS, c.ACS, c.ACS); strings.Contains(s, "secret") || strings.Contains(s, "0123456789abcdef") {
				t.Errorf("key material printed: %s", s)
			}
		})
	}
	bad := []struct{ name, yaml, want string }{
		{"short key", "acs:\n  keys: {default: short}\n", "w.yaml:2: acs.keys.default: key material of 5 bytes; want at least 16"},
		{"bad hex", "acs:\n  keys: {default: \"hex:zz\"}\n", "w.yaml:2: acs.keys.default: hex: not valid hexadecimal"},
		{"unset variable", "acs:\n  keys: {default: \"${WARDEN_TEST_UNSET_VAR}\"}\n", "w.yaml:2: acs.keys.default: environment variable WARDEN_TEST_UNSET_VAR is not set"},
		{"require without keys", "acs:\n  require_signatures: true\n", "w.yaml:2: acs.require_signatures: true needs acs.keys"},
		{"replay shorter than skew", "acs:\n  skew_window: 10m\n  replay_window: 1m\n", "w.yaml:3: acs.replay_window: 1m must be at least acs.skew_window (10m)"},
		{"skew too long", "acs:\n  skew_window: 2h\n", `w.yaml:2: acs.skew_window: expected a duration in 1s..1h such as 30s, got "2h"`},
		{"bad defer", "acs:\n  defer: {max_per_session: 0}\n", `w.yaml:2: acs.defer.max_per_session: expected a whole number in 1..1000, got "0"`},
		{"unknown key", "acs:\n  keyz: {}\n", `w.yaml:2: acs: unknown key "keyz" (want keys, require_signatures, require_provenance, skew_window, replay_window, defer, signing, signing_key, public_keys)`},
		{"bad key id", "acs:\n  keys: {\"a b\": \"0123456789abcdef\"}\n", "w.yaml:2: acs.keys.a b: a key id may hold"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("w.yaml", []byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "0123456789abcdef") {
				t.Errorf("the key is in the message: %v", err)
			}
		})
	}
}
