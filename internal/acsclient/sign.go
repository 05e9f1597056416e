package acsclient

import (
	"bytes"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/wardenhq/warden/internal/canon"
)

// Algorithm is the only signature algorithm this client speaks: the ACS-Core
// baseline (specification §10.1).
const Algorithm = "HMAC-SHA256"

// Canonical returns the RFC 8785 (JCS) form of v: internal/canon's
// encoder, the one warden signs with (its own tests hold it to an
// independent RFC 8785 implementation). Decode JSON with Decode, not plain
// json.Unmarshal, before passing it here, so that no number loses digits
// on the way through float64.
func Canonical(v any) ([]byte, error) {
	c, err := canon.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("acsclient: JCS: %w", err)
	}
	return c, nil
}

// Decode decodes exactly one JSON value from b, keeping numbers as
// json.Number so that Canonical reproduces them digit for digit.
func Decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("acsclient: data after the JSON value")
	}
	return v, nil
}

// DecodeObject is Decode for a JSON object.
func DecodeObject(b []byte) (map[string]any, error) {
	v, err := Decode(b)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("acsclient: JSON is a %T, not an object", v)
	}
	return m, nil
}

// SessionKey derives the per-session HMAC key warden uses (docs/acs.md),
// as the Go reference Guardian does (a choice ACS v0.1.0 leaves open):
// HKDF-SHA256 with ikm as input keying material, no salt, the UTF-8 bytes of
// sessionID as info, 32 bytes of output.
func SessionKey(ikm []byte, sessionID string) ([]byte, error) {
	return derive(ikm, nil, sessionID, 32)
}

// derive is RFC 5869 HKDF with SHA-256; SessionKey fixes its inputs. The
// tests prove the call against the RFC's vectors through it.
func derive(ikm, salt []byte, info string, n int) ([]byte, error) {
	return hkdf.Key(sha256.New, ikm, salt, info, n)
}

// SigningInput returns the bytes an ACS signature covers (specification
// §10): the JCS form of the whole JSON-RPC message msg with the signature
// member of msg[at] removed. at is "params" for a request, "result" for a
// result and "error" for an error. msg is not changed.
func SigningInput(msg map[string]any, at string) ([]byte, error) {
	c := make(map[string]any, len(msg))
	for k, v := range msg {
		c[k] = v
	}
	if inner, ok := msg[at].(map[string]any); ok {
		stripped := make(map[string]any, len(inner))
		for k, v := range inner {
			if k != "signature" {
				stripped[k] = v
			}
		}
		c[at] = stripped
	}
	return Canonical(c)
}

// Signature computes the signature object {"algorithm","value","key_id"} for
// msg with the signature at msg[at] (see SigningInput), keyed with the
// session key of ikm and sessionID. It does not store it.
func Signature(msg map[string]any, at string, ikm []byte, keyID, sessionID string) (map[string]any, error) {
	mac, err := macOf(msg, at, ikm, sessionID)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"algorithm": Algorithm,
		"value":     base64.StdEncoding.EncodeToString(mac),
		"key_id":    keyID,
	}, nil
}

// Sign stores Signature(msg, at, …) as msg[at]["signature"], replacing any
// signature there.
func Sign(msg map[string]any, at string, ikm []byte, keyID, sessionID string) error {
	inner, ok := msg[at].(map[string]any)
	if !ok {
		return fmt.Errorf("acsclient: sign: %q is not an object", at)
	}
	sig, err := Signature(msg, at, ikm, keyID, sessionID)
	if err != nil {
		return err
	}
	inner["signature"] = sig
	return nil
}

// Verify checks the signature at msg[at]["signature"]: an HMAC-SHA256 object
// whose key_id is keyID (when keyID is not empty) and whose value is the
// padded standard base64 of the HMAC of SigningInput(msg, at) under the
// session key of ikm and sessionID.
func Verify(msg map[string]any, at string, ikm []byte, keyID, sessionID string) error {
	inner, ok := msg[at].(map[string]any)
	if !ok {
		return fmt.Errorf("%s is not an object", at)
	}
	raw, ok := inner["signature"]
	if !ok || raw == nil {
		return fmt.Errorf("%s.signature is missing", at)
	}
	sig, ok := raw.(map[string]any)
	if !ok {
		return fmt.Errorf("%s.signature is a %T, not an object", at, raw)
	}
	if a, _ := sig["algorithm"].(string); a != Algorithm {
		return fmt.Errorf("%s.signature.algorithm is %v, want %s", at, sig["algorithm"], Algorithm)
	}
	if kid, ok := sig["key_id"].(string); !ok {
		return fmt.Errorf("%s.signature.key_id is missing or not a string", at)
	} else if keyID != "" && kid != keyID {
		return fmt.Errorf("%s.signature.key_id is %q, want %q", at, kid, keyID)
	}
	v, ok := sig["value"].(string)
	if !ok {
		return fmt.Errorf("%s.signature.value is missing or not a string", at)
	}
	got, err := base64.StdEncoding.Strict().DecodeString(v)
	if err != nil {
		return fmt.Errorf("%s.signature.value is not padded standard base64: %v", at, err)
	}
	want, err := macOf(msg, at, ikm, sessionID)
	if err != nil {
		return err
	}
	if !hmac.Equal(got, want) {
		return fmt.Errorf("%s.signature.value does not verify (HMAC-SHA256 under the key of session %q)", at, sessionID)
	}
	return nil
}

func macOf(msg map[string]any, at string, ikm []byte, sessionID string) ([]byte, error) {
	input, err := SigningInput(msg, at)
	if err != nil {
		return nil, err
	}
	key, err := SessionKey(ikm, sessionID)
	if err != nil {
		return nil, fmt.Errorf("acsclient: HKDF: %w", err)
	}
	m := hmac.New(sha256.New, key)
	m.Write(input)
	return m.Sum(nil), nil
}
