package sigkey

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cloudflare/circl/sign/mldsa/mldsa65"
	"github.com/cloudflare/circl/sign/slhdsa"
)

// keys are generated once per algorithm: SLH-DSA-128s keys and
// signatures are slow.
var (
	keysOnce sync.Once
	keys     map[Alg]*PrivateKey
)

func testKey(t testing.TB, alg Alg) *PrivateKey {
	keysOnce.Do(func() {
		keys = map[Alg]*PrivateKey{}
		for _, a := range SigningAlgs {
			k, err := Generate(a, nil)
			if err != nil {
				panic(err)
			}
			keys[a] = k
		}
	})
	return keys[alg]
}

func TestSignVerifyRoundTrip(t *testing.T) {
	for _, alg := range SigningAlgs {
		t.Run(string(alg), func(t *testing.T) {
			k := testKey(t, alg)
			msg := []byte(`{"jsonrpc":"2.0","result":{"decision":"allow"}}`)
			sig, err := k.Sign(msg)
			if err != nil {
				t.Fatal(err)
			}
			if !k.Public().Verify(msg, sig) {
				t.Fatal("own signature does not verify")
			}
			// Tampering: a changed message, a changed signature, another key.
			bad := bytes.Clone(msg)
			bad[len(bad)-3] ^= 1
			if k.Public().Verify(bad, sig) {
				t.Error("signature verifies a changed message")
			}
			sig2 := bytes.Clone(sig)
			sig2[len(sig2)/2] ^= 0x40
			if k.Public().Verify(msg, sig2) {
				t.Error("changed signature verifies")
			}
			if k.Public().Verify(msg, sig[:len(sig)-1]) {
				t.Error("truncated signature verifies")
			}
			other, err := Generate(alg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if other.Public().Verify(msg, sig) {
				t.Error("another key verifies the signature")
			}
			// The public key file round-trips, and so does the private one.
			text, _ := k.Public().MarshalText()
			p, err := ParsePublicKey(append(text, '\n'))
			if err != nil || !p.Equal(k.Public()) {
				t.Fatalf("public key round trip: %v", err)
			}
			k2, err := ParsePrivateKey(k.MarshalPrivate())
			if err != nil || !k2.Public().Equal(k.Public()) || k2.KeyID() != k.KeyID() {
				t.Fatalf("private key round trip: %v", err)
			}
			if len(k.KeyID()) != 32 {
				t.Errorf("key id %q: want 32 hex digits", k.KeyID())
			}
		})
	}
}

// TestCirclInterop checks the encodings against circl's own API, as an
// independent verifier would use it.
func TestCirclInterop(t *testing.T) {
	msg := []byte("checkpoint")
	k := testKey(t, MLDSA65)
	sig, _ := k.Sign(msg)
	var pk mldsa65.PublicKey
	if err := pk.UnmarshalBinary(k.Public().Bytes()); err != nil {
		t.Fatal(err)
	}
	if !mldsa65.Verify(&pk, msg, nil, sig) {
		t.Error("circl mldsa65.Verify rejects warden's signature")
	}
	s := testKey(t, SLHDSA128s)
	sig, _ = s.Sign(msg)
	spk := slhdsa.PublicKey{ID: slhdsa.SHA2_128s}
	if err := spk.UnmarshalBinary(s.Public().Bytes()); err != nil {
		t.Fatal(err)
	}
	if !slhdsa.Verify(&spk, slhdsa.NewMessage(msg), sig, nil) {
		t.Error("circl slhdsa.Verify rejects warden's signature")
	}
}

func TestEd25519Verify(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	p, err := ParsePublicKey([]byte(hex.EncodeToString(pub) + "\n"))
	if err != nil || p.Alg() != Ed25519 {
		t.Fatalf("hex ed25519: %v", err)
	}
	sig := ed25519.Sign(priv, []byte("m"))
	if !p.Verify([]byte("m"), sig) || p.Verify([]byte("n"), sig) {
		t.Error("ed25519 verify")
	}
}

func TestParseErrors(t *testing.T) {
	pubText, _ := testKey(t, MLDSA65).Public().MarshalText()
	for _, tc := range []struct {
		name, in, want string
		private        bool
	}{
		{"empty public", "", "not a public key", false},
		{"unknown alg", "rsa:AAAA", `unknown signature algorithm "rsa"`, false},
		{"bad base64", "ml-dsa-65:!!!", "not standard base64", false},
		{"short key", "ml-dsa-65:AAAA", "is 1952 bytes, not 3", false},
		{"slh short", "slh-dsa-128s:AAAA", "not an slh-dsa-128s public key", false},
		{"pem as public", "-----BEGIN ML-DSA-65 PRIVATE KEY-----\n", "a PEM block, not a public key", false},
		{"short hex", "abcd", "not a public key", false},
		{"public as private", string(pubText), "a public key, not a private key", true},
		{"garbage private", "hello", "not a private key file", true},
		{"wrong pem type", "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n", `type "RSA PRIVATE KEY"`, true},
		{"short seed", "-----BEGIN ML-DSA-65 PRIVATE KEY-----\nAAAA\n-----END ML-DSA-65 PRIVATE KEY-----\n", "is 32 bytes, not 3", true},
		{"two blocks", string(testKey(t, MLDSA65).MarshalPrivate()) + string(testKey(t, MLDSA65).MarshalPrivate()), "more than one PEM block", true},
		{"too long", strings.Repeat("a", MaxFileSize+1), "longer than", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.private {
				_, err = ParsePrivateKey([]byte(tc.in))
			} else {
				_, err = ParsePublicKey([]byte(tc.in))
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if _, err := Generate("rsa", nil); err == nil || !strings.Contains(err.Error(), `cannot generate a "rsa" key`) {
		t.Errorf("Generate(rsa): %v", err)
	}
	if _, err := ParseAlg("ML-DSA-44"); err == nil {
		t.Error("ParseAlg(ML-DSA-44) accepted")
	}
	for in, want := range map[string]Alg{"ML-DSA-65": MLDSA65, "slh-dsa-128s": SLHDSA128s, "SLH-DSA-128s": SLHDSA128s} {
		if got, err := ParseAlg(in); err != nil || got != want {
			t.Errorf("ParseAlg(%q) = %q, %v", in, got, err)
		}
	}
}

func TestWriteKeyPairAndLoad(t *testing.T) {
	dir := t.TempDir()
	k := testKey(t, MLDSA65)
	prefix := filepath.Join(dir, "warden")
	priv, pub, err := WriteKeyPair(k, prefix, false)
	if err != nil {
		t.Fatal(err)
	}
	for path, mode := range map[string]os.FileMode{priv: 0o600, pub: 0o644} {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %04o (%v)", path, fi.Mode().Perm(), mode, err)
		}
	}
	if _, _, err := WriteKeyPair(k, prefix, false); !errors.Is(err, ErrExists) {
		t.Errorf("second write without force: %v, want ErrExists", err)
	}
	// Only the public file there: still refused, and the private one is not written.
	os.Remove(priv)
	if _, _, err := WriteKeyPair(k, prefix, false); !errors.Is(err, ErrExists) {
		t.Errorf("write over a .pub without force: %v", err)
	}
	if _, err := os.Stat(priv); err == nil {
		t.Error("private key written although the public one exists")
	}
	k2, _ := Generate(MLDSA65, nil)
	if _, _, err := WriteKeyPair(k2, prefix, true); err != nil {
		t.Fatalf("force: %v", err)
	}
	lk, err := LoadPrivateKey(priv)
	if err != nil || lk.KeyID() != k2.KeyID() {
		t.Fatalf("load private: %v", err)
	}
	lp, err := LoadPublicKey(pub)
	if err != nil || !lp.Equal(k2.Public()) {
		t.Fatalf("load public: %v", err)
	}
	if err := os.Chmod(priv, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPrivateKey(priv); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("group-readable private key: %v", err)
	}
	if _, err := LoadPrivateKey(filepath.Join(dir, "none")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if _, err := LoadPublicKey(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: %v", err)
	}
}

func FuzzParsePublicKey(f *testing.F) {
	f.Add([]byte("ml-dsa-65:AAAA"))
	f.Add([]byte("slh-dsa-128s:" + strings.Repeat("A", 44)))
	f.Add([]byte(strings.Repeat("ab", 32)))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParsePublicKey(b)
		if err == nil {
			p.Verify([]byte("m"), make([]byte, 100))
			_ = p.KeyID()
		}
	})
}

func FuzzParsePrivateKey(f *testing.F) {
	f.Add([]byte("-----BEGIN ML-DSA-65 PRIVATE KEY-----\nAAAA\n-----END ML-DSA-65 PRIVATE KEY-----\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParsePrivateKey(b)
		if err == nil {
			_ = k.KeyID()
		}
	})
}

func BenchmarkMLDSA65Sign(b *testing.B) {
	k := testKey(b, MLDSA65)
	msg := bytes.Repeat([]byte("x"), 1024)
	for b.Loop() {
		if _, err := k.Sign(msg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMLDSA65Verify(b *testing.B) {
	k := testKey(b, MLDSA65)
	msg := bytes.Repeat([]byte("x"), 1024)
	sig, _ := k.Sign(msg)
	for b.Loop() {
		if !k.Public().Verify(msg, sig) {
			b.Fatal("verify")
		}
	}
}

func BenchmarkSLHDSA128sSign(b *testing.B) {
	k := testKey(b, SLHDSA128s)
	msg := bytes.Repeat([]byte("x"), 1024)
	for b.Loop() {
		if _, err := k.Sign(msg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSLHDSA128sVerify(b *testing.B) {
	k := testKey(b, SLHDSA128s)
	msg := bytes.Repeat([]byte("x"), 1024)
	sig, _ := k.Sign(msg)
	for b.Loop() {
		if !k.Public().Verify(msg, sig) {
			b.Fatal("verify")
		}
	}
}

// FuzzVerify: any signature bytes, of any length, are refused without a
// panic, under both algorithms.
func FuzzVerify(f *testing.F) {
	f.Add([]byte("m"), []byte{})
	f.Add([]byte("m"), bytes.Repeat([]byte{1}, 3309))
	f.Add([]byte("m"), bytes.Repeat([]byte{2}, 7856))
	f.Fuzz(func(t *testing.T, msg, sig []byte) {
		for _, alg := range SigningAlgs {
			if testKey(t, alg).Public().Verify(msg, sig) {
				t.Fatalf("%s: random bytes verify", alg)
			}
		}
	})
}
