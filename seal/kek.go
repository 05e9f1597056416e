package seal

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/wardenhq/warden/conf"
)

// KeySize is the size in bytes of every key of the hierarchy: the KEK, the
// period DEKs and the session keys (AES-256).
const KeySize = 32

// maxKEKFile bounds the bytes read from a KEK file: a key written as
// "base64:…" or "hex:…" with a line end fits many times over.
const maxKEKFile = 4096

// A KEK (key-encryption key) wraps and unwraps the period DEKs. The
// additional data binds a wrapped DEK to its tenant, period and id: a
// wrapped DEK copied to another row does not unwrap. An implementation
// must be safe for concurrent use; a KMS implements it by calling its
// encrypt and decrypt operations.
type KEK interface {
	// ID names this KEK (not secret, stable across restarts). It is
	// stored beside each DEK it wraps, so a DEK wrapped by another KEK
	// is reported as such (ErrWrongKEK) rather than as tampered.
	ID() string
	// Wrap encrypts dek bound to ad.
	Wrap(dek, ad []byte) ([]byte, error)
	// Unwrap decrypts what Wrap returned for the same ad.
	Unwrap(wrapped, ad []byte) ([]byte, error)
}

// localKEK is a KEK held in memory: AES-256-GCM, wrapped = nonce | sealed.
type localKEK struct {
	id   string
	aead cipher.AEAD
}

// NewKEK returns a KEK that wraps with key (KeySize bytes) by
// AES-256-GCM. Its ID is "local:" and 16 hex digits of an HMAC of a fixed
// label under the key: two processes with the same key agree on it, and it
// does not reveal the key.
func NewKEK(key []byte) (KEK, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("seal: a KEK is %d bytes, not %d", KeySize, len(key))
	}
	if bytes.Equal(key, make([]byte, KeySize)) {
		return nil, errors.New("seal: the KEK is all zero bytes")
	}
	aead, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("warden/seal kek id v1"))
	return &localKEK{id: "local:" + hex.EncodeToString(m.Sum(nil)[:8]), aead: aead}, nil
}

func (k *localKEK) ID() string { return k.id }

func (k *localKEK) Wrap(dek, ad []byte) ([]byte, error) {
	out := make([]byte, nonceSize, nonceSize+len(dek)+k.aead.Overhead())
	if _, err := rand.Read(out); err != nil {
		return nil, err
	}
	return k.aead.Seal(out, out, dek, ad), nil
}

func (k *localKEK) Unwrap(wrapped, ad []byte) ([]byte, error) {
	if len(wrapped) < nonceSize+k.aead.Overhead() {
		return nil, errors.New("seal: wrapped key too short")
	}
	return k.aead.Open(nil, wrapped[:nonceSize], wrapped[nonceSize:], ad)
}

// FileKEK reads the KEK from the file path: exactly KeySize raw bytes, or
// a line "hex:<64 hex digits>", "base64:<32 bytes in base64>" or a
// KeySize-byte text. A file that group or others may access is refused
// (as ssh refuses a private key), and so is anything but a regular file.
// Errors name the file and never hold the key.
func FileKEK(path string) (KEK, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("seal: KEK file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("seal: KEK file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("seal: KEK file %s is not a regular file", path)
	}
	if m := fi.Mode().Perm(); m&0o077 != 0 {
		return nil, fmt.Errorf("seal: KEK file %s is accessible by group or others (mode %04o); run: chmod 600 %s", path, m, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKEKFile+1))
	if err != nil {
		return nil, fmt.Errorf("seal: KEK file %s: %w", path, err)
	}
	if len(b) > maxKEKFile {
		return nil, fmt.Errorf("seal: KEK file %s is larger than %d bytes", path, maxKEKFile)
	}
	key := b
	if len(b) != KeySize {
		if key, err = keyText(string(b)); err != nil {
			return nil, fmt.Errorf("seal: KEK file %s: %w", path, err)
		}
	}
	k, err := NewKEK(key)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return k, nil
}

// EnvKEK reads the KEK from the environment variable name, written as in
// a KEK file's text: "hex:…", "base64:…" or a KeySize-byte text.
func EnvKEK(name string) (KEK, error) {
	v, ok := os.LookupEnv(name)
	if !ok || v == "" {
		return nil, fmt.Errorf("seal: KEK: environment variable %s is not set", name)
	}
	key, err := keyText(v)
	if err != nil {
		return nil, fmt.Errorf("seal: KEK in %s: %w", name, err)
	}
	return NewKEK(key)
}

// keyText decodes a key written as text (conf.KeyMaterial's forms, without
// expanding variables in a plain text key) and checks its size.
func keyText(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	key := []byte(s)
	if strings.HasPrefix(s, "hex:") || strings.HasPrefix(s, "base64:") {
		var err error
		if key, err = conf.KeyMaterial(s); err != nil {
			return nil, err
		}
	}
	if len(key) != KeySize {
		return nil, fmt.Errorf(`not a %d-byte key (write %d raw bytes, "hex:<%d hex digits>" or "base64:<%d bytes in base64>")`,
			KeySize, KeySize, 2*KeySize, KeySize)
	}
	return key, nil
}

// nonceSize is GCM's standard nonce size.
const nonceSize = 12

func newGCM(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}
