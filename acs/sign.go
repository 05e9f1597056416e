package acs

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"

	"github.com/wardenhq/warden/internal/canon"
	"github.com/wardenhq/warden/sigkey"
)

// Signer signs and verifies ACS messages with HMAC-SHA256 (docs/acs.md):
// the per-session key is HKDF-SHA256 over the key_id's input keying
// material, no salt, info the UTF-8 session_id, 32 bytes; the signed
// input is the RFC 8785 (JCS) form of the whole JSON-RPC message without
// its signature member (params.signature, result.signature or
// error.signature); the value is standard base64 with padding. The key
// material is never logged or returned.
//
// With ACS-Crypto (docs/acs.md, "Signatures"), a request may instead be
// signed with ML-DSA-65 or SLH-DSA-128s under a client public key (by
// key_id), over the same signed input; and when warden has its own
// signing key, every answer it signs carries that signature (algorithm
// "ML-DSA-65" or "SLH-DSA-128s", key_id the key's id) instead of the
// HMAC one.
type Signer struct {
	keys map[string][]byte
	pub  map[string]*sigkey.PublicKey // client public keys by key_id (acs.public_keys)
	own  *sigkey.PrivateKey           // warden's signing key (acs.signing_key), or nil
}

// withCrypto adds the ACS-Crypto keys: warden's own signing key (nil for
// none) and the clients' public keys by key_id.
func (s *Signer) withCrypto(own *sigkey.PrivateKey, pub map[string]*sigkey.PublicKey) *Signer {
	s.own = own
	s.pub = make(map[string]*sigkey.PublicKey, len(pub))
	for id, k := range pub {
		s.pub[id] = k
	}
	return s
}

// algorithms are the signature algorithms configured, for the
// ServerHello's signature_algorithms_supported: HMAC-SHA256 with acs.keys,
// then the asymmetric ones of warden's key and the clients' keys.
func (s *Signer) algorithms() []string {
	algs := []string{}
	if len(s.keys) > 0 {
		algs = append(algs, AlgHMAC)
	}
	for _, a := range sigkey.SigningAlgs {
		has := s.own != nil && s.own.Alg() == a
		for _, k := range s.pub {
			has = has || k.Alg() == a
		}
		if has {
			algs = append(algs, a.ACSName())
		}
	}
	return algs
}

// signsAll reports whether warden signs every answer with its own key.
func (s *Signer) signsAll() bool { return s.own != nil }

// NewSigner returns a signer over keys (by key_id); it keeps its own copy.
func NewSigner(keys map[string][]byte) *Signer {
	s := &Signer{keys: make(map[string][]byte, len(keys))}
	for id, k := range keys {
		s.keys[id] = append([]byte(nil), k...)
	}
	return s
}

// Has reports whether keyID names a configured HMAC key.
func (s *Signer) Has(keyID string) bool { _, ok := s.keys[keyID]; return ok }

// Enabled reports whether any key is configured (HMAC keys, client
// public keys, or warden's own signing key).
func (s *Signer) Enabled() bool { return len(s.keys) > 0 || len(s.pub) > 0 || s.own != nil }

// sessionKey derives the session's HMAC key.
func (s *Signer) sessionKey(keyID, session string) ([]byte, error) {
	ikm, ok := s.keys[keyID]
	if !ok {
		return nil, fmt.Errorf("unknown key_id %q", clip(keyID))
	}
	return hkdf.Key(sha256.New, ikm, nil, session, 32)
}

// mac computes the signature value of msg (the signature member already
// removed) under the session's key.
func (s *Signer) mac(keyID, session string, msg map[string]any) (string, error) {
	key, err := s.sessionKey(keyID, session)
	if err != nil {
		return "", err
	}
	in, err := Canonical(msg)
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, key)
	m.Write(in)
	return base64.StdEncoding.EncodeToString(m.Sum(nil)), nil
}

// verify checks a request's signature: the message without
// params.signature, under the session's key, compared in constant time.
func (s *Signer) verify(r *request) *Error {
	sig := r.sig
	if alg, ok := sigkey.FromACSName(sig.Algorithm); ok {
		return s.verifyPublic(r, alg)
	}
	if sig.Algorithm != AlgHMAC {
		return errf(CodeSignatureInvalid, "params.signature.algorithm", "%q is not supported (supported: %s, ML-DSA-65, SLH-DSA-128s)", clip(sig.Algorithm), AlgHMAC)
	}
	if !s.Has(sig.KeyID) {
		return errf(CodeSignatureInvalid, "params.signature.key_id", "no key %q is configured (acs.keys)", clip(sig.KeyID))
	}
	got, err := base64.StdEncoding.DecodeString(sig.Value)
	if err != nil {
		if got, err = base64.RawStdEncoding.DecodeString(sig.Value); err != nil {
			return errf(CodeSignatureInvalid, "params.signature.value", "not base64")
		}
	}
	want, err := s.mac(sig.KeyID, r.sessionID, without(r.msg, "params"))
	if err != nil {
		return errf(CodeSignatureInvalid, "params.signature", "cannot compute the signing input: %v", err)
	}
	w, _ := base64.StdEncoding.DecodeString(want)
	if !hmac.Equal(got, w) {
		return errf(CodeSignatureInvalid, "params.signature.value", "does not verify: the signature must be HMAC-SHA256 over the JCS form of the whole message without params.signature, keyed by HKDF-SHA256(key %q, info session_id)", sig.KeyID)
	}
	return nil
}

// verifyPublic checks a request signed with an asymmetric algorithm: the
// key_id must name a client public key of that algorithm
// (acs.public_keys), and the value, standard base64, must be its
// signature of the message without params.signature.
func (s *Signer) verifyPublic(r *request, alg sigkey.Alg) *Error {
	sig := r.sig
	if len(s.pub) == 0 {
		return errf(CodeSignatureInvalid, "params.signature.algorithm", "%s is not configured: warden has no client public keys (acs.public_keys)", alg.ACSName())
	}
	pk, ok := s.pub[sig.KeyID]
	if !ok {
		return errf(CodeSignatureInvalid, "params.signature.key_id", "no public key %q is configured (acs.public_keys)", clip(sig.KeyID))
	}
	if pk.Alg() != alg {
		return errf(CodeSignatureInvalid, "params.signature.algorithm", "key %q is an %s key, not %s", sig.KeyID, pk.Alg().ACSName(), alg.ACSName())
	}
	got, err := base64.StdEncoding.DecodeString(sig.Value)
	if err != nil {
		if got, err = base64.RawStdEncoding.DecodeString(sig.Value); err != nil {
			return errf(CodeSignatureInvalid, "params.signature.value", "not base64")
		}
	}
	in, err := Canonical(without(r.msg, "params"))
	if err != nil {
		return errf(CodeSignatureInvalid, "params.signature", "cannot compute the signing input: %v", err)
	}
	if !pk.Verify(in, got) {
		return errf(CodeSignatureInvalid, "params.signature.value", "does not verify: the signature must be %s (empty context) over the JCS form of the whole message without params.signature, by key %q", alg.ACSName(), sig.KeyID)
	}
	return nil
}

// sign puts the signature of the response msg under member ("result" or
// "error"): warden's own key's when it has one, else the HMAC of the
// request's keyID.
func (s *Signer) sign(keyID, session string, msg map[string]any, member string) error {
	inner, _ := msg[member].(map[string]any)
	if s.own != nil {
		in, err := Canonical(msg)
		if err != nil {
			return err
		}
		v, err := s.own.Sign(in)
		if err != nil {
			return err
		}
		inner["signature"] = map[string]any{"algorithm": s.own.Alg().ACSName(), "value": base64.StdEncoding.EncodeToString(v), "key_id": s.own.KeyID()}
		return nil
	}
	v, err := s.mac(keyID, session, msg)
	if err != nil {
		return err
	}
	inner["signature"] = map[string]any{"algorithm": AlgHMAC, "value": v, "key_id": keyID}
	return nil
}

// without returns msg with msg[member].signature left out (a shallow copy;
// msg is not changed).
func without(msg map[string]any, member string) map[string]any {
	inner, ok := msg[member].(map[string]any)
	if !ok {
		return msg
	}
	if _, has := inner["signature"]; !has {
		return msg
	}
	out := make(map[string]any, len(msg))
	for k, v := range msg {
		out[k] = v
	}
	in2 := make(map[string]any, len(inner))
	for k, v := range inner {
		if k != "signature" {
			in2[k] = v
		}
	}
	out[member] = in2
	return out
}

// Canonical returns the RFC 8785 (JCS) form of v.
func Canonical(v any) ([]byte, error) { return canon.Marshal(v) }

// RequestHash is the ACS-Audit request_hash of a request: lowercase hex
// SHA-256 of the JCS form of its params (signature included).
func RequestHash(params map[string]any) (string, error) {
	b, err := Canonical(params)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:]), nil
}
