package auth

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSessions(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	ops := Token{Name: "ops.team", SHA256: mustHash(t, "wdn_ops"), Scopes: Read | Approve}
	viewer := Token{Name: "viewer", SHA256: mustHash(t, "wdn_viewer"), Scopes: Read, Tenant: "acme"}
	cfg := &Config{Tokens: []Token{ops, viewer}}
	key := bytes.Repeat([]byte{7}, SessionKeySize)
	s := NewSessions(key, cfg)
	s.Now = func() time.Time { return now }
	good, exp := s.Issue(ops)
	if !exp.Equal(now.Add(SessionTTL)) {
		t.Fatalf("expires %v", exp)
	}
	if strings.Contains(good, "wdn_ops") || strings.Contains(good, Hash("wdn_ops")) {
		t.Fatalf("the cookie holds the token or its hash: %s", good)
	}
	parts := strings.Split(good, ".")
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	later := func(d time.Duration) func(*Sessions) {
		return func(s *Sessions) { s.Now = func() time.Time { return now.Add(d) } }
	}
	tests := []struct {
		name   string
		value  string
		change func(*Sessions)
		want   string // token name, "" for refused
	}{
		{"valid", good, nil, "ops.team"},
		{"valid an hour before expiry", good, later(SessionTTL - time.Hour), "ops.team"},
		{"expired", good, later(SessionTTL), ""},
		{"forged MAC", strings.Join(append(parts[:3:3], enc("forged-mac-forged-mac-forged-mac")), "."), nil, ""},
		{"another token's name", strings.Join([]string{"v1", enc("viewer"), parts[2], parts[3]}, "."), nil, ""},
		{"expiry pushed back", strings.Join([]string{"v1", parts[1], strconv.FormatInt(now.Add(48*time.Hour).Unix(), 10), parts[3]}, "."), nil, ""},
		{"other version", "v2" + good[2:], nil, ""},
		{"malformed", "v1.x", nil, ""},
		{"empty", "", nil, ""},
		{"bad base64 name", "v1.!!." + parts[2] + "." + parts[3], nil, ""},
		{"token removed from the config", good, func(s *Sessions) { s.cfg = &Config{Tokens: []Token{viewer}} }, ""},
		{"token given a new hash", good, func(s *Sessions) {
			o := ops
			o.SHA256 = mustHash(t, "wdn_ops2")
			s.cfg = &Config{Tokens: []Token{o, viewer}}
		}, ""},
		{"another key (key file removed)", good, func(s *Sessions) { s.key = bytes.Repeat([]byte{8}, SessionKeySize) }, ""},
		{"scopes changed: the session gets the new ones", good, func(s *Sessions) {
			o := ops
			o.Scopes = Read
			s.cfg = &Config{Tokens: []Token{o}}
		}, "ops.team"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := *s
			if tt.change != nil {
				tt.change(&c)
			}
			tok, ok := c.Check(tt.value)
			if ok != (tt.want != "") || tok.Name != tt.want {
				t.Errorf("Check = %q, %v; want %q", tok.Name, ok, tt.want)
			}
		})
	}
	if _, ok := (*Sessions)(nil).Check(good); ok {
		t.Error("nil Sessions accepted a cookie")
	}
}

func TestLoadSessionKey(t *testing.T) {
	dir := t.TempDir()
	k1, err := LoadSessionKey(dir)
	if err != nil || len(k1) != SessionKeySize {
		t.Fatalf("key %d bytes, %v", len(k1), err)
	}
	fi, err := os.Stat(filepath.Join(dir, SessionKeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	k2, err := LoadSessionKey(dir)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Fatalf("second load: %v", err)
	}
	if err := os.Chmod(filepath.Join(dir, SessionKeyFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSessionKey(dir); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a readable key: %v", err)
	}
}
