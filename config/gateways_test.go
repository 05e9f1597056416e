package config

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/sealid"
)

func TestGateways(t *testing.T) {
	t.Setenv("WARDEN_TEST_SESSION_KEY", "hex:"+strings.Repeat("ab", 32))
	hexKey := bytes.Repeat([]byte{0xab}, 32)
	b64 := "base64:AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=" // 32 × 0x01
	tests := []struct {
		name    string
		yaml    string
		keys    [][]byte
		maxAge  time.Duration
		wantErr string
	}{
		{name: "default", yaml: "{}\n", maxAge: sealid.DefaultMaxAge},
		{name: "env key", yaml: "gateways: {session_key: \"${WARDEN_TEST_SESSION_KEY}\"}\n", keys: [][]byte{hexKey}, maxAge: sealid.DefaultMaxAge},
		{name: "rotation list", yaml: fmt.Sprintf("gateways: {session_key: [%q, \"${WARDEN_TEST_SESSION_KEY}\"], session_max_age: 2h}\n", b64),
			keys: [][]byte{bytes.Repeat([]byte{1}, 32), hexKey}, maxAge: 2 * time.Hour},
		{name: "text key of 32 bytes", yaml: "gateways: {session_key: \"" + strings.Repeat("k", 32) + "\"}\n", keys: [][]byte{bytes.Repeat([]byte("k"), 32)}, maxAge: sealid.DefaultMaxAge},
		{name: "max age in days", yaml: "gateways: {session_max_age: 7d}\n", maxAge: 7 * 24 * time.Hour},
		{name: "nine keys", yaml: "gateways:\n  session_key: [" + strings.Repeat(fmt.Sprintf("%q, ", b64), 8) + fmt.Sprintf("%q", b64) + "]\n", wantErr: "w.yaml:2: gateways.session_key: expected 1 to 8 keys, got 9"},
		{name: "bad key in a block list", yaml: "gateways:\n  session_key:\n    - " + fmt.Sprintf("%q", b64) + "\n    - \"hex:zz\"\n", wantErr: "w.yaml:4: gateways.session_key[1]: hex: not valid hexadecimal"},
		{name: "short key", yaml: "gateways: {session_key: \"hex:abab\"}\n", wantErr: "w.yaml:1: gateways.session_key[0]: key material of 2 bytes"},
		{name: "16 bytes is not AES-256", yaml: "gateways: {session_key: \"hex:" + strings.Repeat("ab", 16) + "\"}\n", wantErr: "want 32 (AES-256)"},
		{name: "bad hex", yaml: "gateways: {session_key: \"hex:zz\"}\n", wantErr: "w.yaml:1: gateways.session_key[0]: hex: not valid hexadecimal"},
		{name: "unset variable", yaml: "gateways: {session_key: \"${WARDEN_TEST_NO_SUCH_VAR}\"}\n", wantErr: "gateways.session_key[0]: environment variable WARDEN_TEST_NO_SUCH_VAR is not set"},
		{name: "empty list", yaml: "gateways: {session_key: []}\n", wantErr: "w.yaml:1: gateways.session_key: expected 1 to 8 keys, got 0"},
		{name: "bad list item", yaml: "gateways: {session_key: [{a: b}]}\n", wantErr: "w.yaml:1: gateways.session_key[0]: expected \"hex:"},
		{name: "max age too small", yaml: "gateways: {session_max_age: 10s}\n", wantErr: `w.yaml:1: gateways.session_max_age: expected a duration in 1m..30d such as 30s, got "10s"`},
		{name: "max age too large", yaml: "gateways: {session_max_age: 60d}\n", wantErr: `gateways.session_max_age: expected a duration in 1m..30d such as 30s, got "60d"`},
		{name: "unknown key", yaml: "gateways: {sticky: true}\n", wantErr: `w.yaml:1: gateways: unknown key "sticky" (want session_key, session_max_age)`},
		{name: "not a mapping", yaml: "gateways: [1]\n", wantErr: "w.yaml:1: gateways: expected a mapping with session_key, session_max_age"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("w.yaml", []byte(tt.yaml))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v; want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), strings.Repeat("ab", 16)) {
					t.Fatalf("the error repeats key material: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			g := c.Gateways
			if g.SessionMaxAge != tt.maxAge || len(g.SessionKeys) != len(tt.keys) {
				t.Fatalf("gateways = %v; want %d keys, max age %v", g, len(tt.keys), tt.maxAge)
			}
			for i := range tt.keys {
				if !bytes.Equal(g.SessionKeys[i], tt.keys[i]) {
					t.Fatalf("key %d = %x; want %x", i, g.SessionKeys[i], tt.keys[i])
				}
			}
			if s := fmt.Sprintf("%v %#v %+v", g, g, g); strings.Contains(s, "abab") {
				t.Fatalf("printing the section shows a key: %s", s)
			}
		})
	}
}
