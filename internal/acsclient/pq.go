package acsclient

import (
	"encoding/base64"
	"fmt"

	"github.com/cloudflare/circl/sign"
	"github.com/cloudflare/circl/sign/mldsa/mldsa65"
	"github.com/cloudflare/circl/sign/slhdsa"
)

// ACS-Crypto (specification §10.1): asymmetric signatures over the same
// signed input as HMAC-SHA256 (SigningInput), made and checked here with
// cloudflare/circl's generic sign.Scheme API: the pure FIPS 204/205
// signature with an empty context, its value padded standard base64.
// ACS's "SLH-DSA-128s" names no hash family; this client takes the SHA2
// parameter set (SLH-DSA-SHA2-128s), as warden does.

// Asymmetric ACS algorithm names.
const (
	AlgMLDSA65    = "ML-DSA-65"
	AlgSLHDSA128s = "SLH-DSA-128s"
)

// SchemeOf is the circl scheme of an ACS algorithm name; nil for one this
// client does not sign asymmetrically.
func SchemeOf(alg string) sign.Scheme {
	switch alg {
	case AlgMLDSA65:
		return mldsa65.Scheme()
	case AlgSLHDSA128s:
		return slhdsa.SHA2_128s.Scheme()
	}
	return nil
}

// acsName is the ACS algorithm name of a circl scheme.
func acsName(s sign.Scheme) string {
	switch s.Name() {
	case mldsa65.Scheme().Name():
		return AlgMLDSA65
	case slhdsa.SHA2_128s.Scheme().Name():
		return AlgSLHDSA128s
	}
	return s.Name()
}

// SignPublic stores at msg[at]["signature"] the signature of
// SigningInput(msg, at) by key (an ML-DSA-65 or SLH-DSA-SHA2-128s circl
// key), with key_id keyID, replacing any signature there.
func SignPublic(msg map[string]any, at string, key sign.PrivateKey, keyID string) error {
	inner, ok := msg[at].(map[string]any)
	if !ok {
		return fmt.Errorf("acsclient: sign: %q is not an object", at)
	}
	delete(inner, "signature")
	input, err := SigningInput(msg, at)
	if err != nil {
		return err
	}
	sig := key.Scheme().Sign(key, input, nil)
	if len(sig) == 0 {
		return fmt.Errorf("acsclient: %s signing failed", key.Scheme().Name())
	}
	inner["signature"] = map[string]any{
		"algorithm": acsName(key.Scheme()),
		"value":     base64.StdEncoding.EncodeToString(sig),
		"key_id":    keyID,
	}
	return nil
}

// VerifyPublic checks the asymmetric signature at msg[at]["signature"]: its
// key_id names a key of keys, its algorithm is that key's, and its value
// verifies over SigningInput(msg, at).
func VerifyPublic(msg map[string]any, at string, keys map[string]sign.PublicKey) error {
	inner, ok := msg[at].(map[string]any)
	if !ok {
		return fmt.Errorf("%s is not an object", at)
	}
	sig, ok := inner["signature"].(map[string]any)
	if !ok {
		return fmt.Errorf("%s.signature is missing or not an object", at)
	}
	alg, _ := sig["algorithm"].(string)
	kid, _ := sig["key_id"].(string)
	pk, ok := keys[kid]
	if !ok {
		return fmt.Errorf("%s.signature.key_id %q names no Guardian key the client has", at, kid)
	}
	if want := acsName(pk.Scheme()); alg != want {
		return fmt.Errorf("%s.signature.algorithm is %q, but key %q is an %s key", at, alg, kid, want)
	}
	v, _ := sig["value"].(string)
	raw, err := base64.StdEncoding.Strict().DecodeString(v)
	if err != nil {
		return fmt.Errorf("%s.signature.value is not padded standard base64: %v", at, err)
	}
	input, err := SigningInput(msg, at)
	if err != nil {
		return err
	}
	if !pk.Scheme().Verify(pk, input, raw, nil) {
		return fmt.Errorf("%s.signature.value does not verify (%s, key %q)", at, alg, kid)
	}
	return nil
}
