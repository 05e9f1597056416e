package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/sigkey"
)

// TestParseACSCrypto: acs.signing, acs.signing_key and acs.public_keys,
// their files read relative to the config file, and a precise error for
// each way they can be wrong.
func TestParseACSCrypto(t *testing.T) {
	dir := t.TempDir()
	ml, err := sigkey.Generate(sigkey.MLDSA65, nil)
	if err != nil {
		t.Fatal(err)
	}
	slh, err := sigkey.Generate(sigkey.SLHDSA128s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sigkey.WriteKeyPair(ml, filepath.Join(dir, "ml"), false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sigkey.WriteKeyPair(slh, filepath.Join(dir, "slh"), false); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("open.key", string(ml.MarshalPrivate()), 0o644)
	write("garbage.key", "not a key\n", 0o600)
	write("garbage.pub", "ml-dsa-65:AAAA\n", 0o644)
	write("ed.pub", strings.Repeat("ab", 32)+"\n", 0o644)
	write("unreadable.key", string(ml.MarshalPrivate()), 0o000)
	file := filepath.Join(dir, "warden.yaml")

	c, err := Parse(file, []byte("acs:\n  signing: ml-dsa-65\n  signing_key: ml\n  public_keys:\n    agent-1: ml.pub\n    agent-2: "+filepath.Join(dir, "slh.pub")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	a := c.ACS
	if a.Signing != sigkey.MLDSA65 || a.SigningKey == nil || a.SigningKey.KeyID() != ml.KeyID() || string(a.SigningKeyFile) != filepath.Join(dir, "ml") {
		t.Errorf("signing: %v", a)
	}
	if !a.PublicKeys["agent-1"].Equal(ml.Public()) || !a.PublicKeys["agent-2"].Equal(slh.Public()) || !a.RequireSignatures {
		t.Errorf("public keys: %v", a)
	}
	if s := fmt.Sprintf("%v %#v", a, a); strings.Contains(s, string(ml.MarshalPrivate()[40:80])) || !strings.Contains(s, "agent-1") {
		t.Errorf("String: %s", s)
	}
	// A signing key alone: answers signed, requests not required to be.
	c, err = Parse(file, []byte("acs:\n  signing: SLH-DSA-128s\n  signing_key: slh\n"))
	if err != nil || c.ACS.SigningKey == nil || c.ACS.Signing != sigkey.SLHDSA128s || c.ACS.RequireSignatures {
		t.Fatalf("signing alone: %v %v", err, c.ACS)
	}

	bad := []struct{ name, yaml, want string }{
		{"unknown alg", "acs:\n  signing: rsa\n  signing_key: ml\n", `acs.signing: expected ml-dsa-65 or slh-dsa-128s, got "rsa"`},
		{"ed25519 alg", "acs:\n  signing: ed25519\n  signing_key: ml\n", `acs.signing: expected ml-dsa-65 or slh-dsa-128s, got "ed25519"`},
		{"signing without key", "acs:\n  signing: ml-dsa-65\n", "acs.signing: ml-dsa-65 needs acs.signing_key"},
		{"key without signing", "acs:\n  signing_key: ml\n", "acs.signing_key: needs acs.signing"},
		{"missing key file", "acs:\n  signing: ml-dsa-65\n  signing_key: nope.key\n", "acs.signing_key: private key: open " + filepath.Join(dir, "nope.key") + ": no such file or directory"},
		{"open key file", "acs:\n  signing: ml-dsa-65\n  signing_key: open.key\n", "is accessible by group or others (mode 0644); run: chmod 600"},
		{"bad key file", "acs:\n  signing: ml-dsa-65\n  signing_key: garbage.key\n", "not a private key file"},
		{"public key as signing key", "acs:\n  signing: ml-dsa-65\n  signing_key: ml.pub\n", "a public key, not a private key"},
		{"alg mismatch", "acs:\n  signing: ml-dsa-65\n  signing_key: slh\n", "holds an slh-dsa-128s key, but acs.signing is ml-dsa-65"},
		{"public keys without signing", "acs:\n  public_keys: {a: ml.pub}\n", "acs.public_keys: needs acs.signing and acs.signing_key"},
		{"missing public key", "acs:\n  signing: ml-dsa-65\n  signing_key: ml\n  public_keys: {a: none.pub}\n", "acs.public_keys.a: public key: open"},
		{"bad public key", "acs:\n  signing: ml-dsa-65\n  signing_key: ml\n  public_keys: {a: garbage.pub}\n", "acs.public_keys.a: public key " + filepath.Join(dir, "garbage.pub") + ": an ml-dsa-65 public key is 1952 bytes, not 3"},
		{"ed25519 public key", "acs:\n  signing: ml-dsa-65\n  signing_key: ml\n  public_keys: {a: ed.pub}\n", "acs.public_keys.a: an Ed25519 key"},
		{"empty public keys", "acs:\n  public_keys: {}\n", "acs.public_keys: expected a mapping"},
		{"key id in both, public_keys first", "acs:\n  signing: ml-dsa-65\n  signing_key: ml\n  public_keys: {a: ml.pub}\n  keys: {a: \"0123456789abcdef\"}\n", "acs.public_keys.a: the key id is also in acs.keys"},
		{"key id in both", "acs:\n  keys: {a: \"0123456789abcdef\"}\n  signing: ml-dsa-65\n  signing_key: ml\n  public_keys: {a: ml.pub}\n", "acs.public_keys.a: the key id is also in acs.keys"},
		{"bad key id", "acs:\n  signing: ml-dsa-65\n  signing_key: ml\n  public_keys: {\"a b\": ml.pub}\n", "acs.public_keys.a b: a key id may hold"},
	}
	if os.Geteuid() != 0 { // root reads a mode-0 file
		bad = append(bad, struct{ name, yaml, want string }{"unreadable key", "acs:\n  signing: ml-dsa-65\n  signing_key: unreadable.key\n", "permission denied"})
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(file, []byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "PRIVATE KEY-----\n") {
				t.Errorf("error shows a key: %v", err)
			}
		})
	}
}
