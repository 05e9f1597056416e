// Package canon produces the RFC 8785 JSON Canonicalization Scheme (JCS)
// form that ACS signatures, request and entry hashes and approval keys are
// computed over. It uses jsontext.Value.Canonicalize from
// github.com/go-json-experiment/json (the mirror of encoding/json/v2),
// which implements RFC 8785 directly and measured 3× faster than the
// re-parse of gowebpki/jcs with one allocation (BenchmarkCanonical).
package canon

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/wardenhq/warden"
)

// Transform returns the JCS form of the JSON text b (b is not changed).
func Transform(b []byte) ([]byte, error) {
	v := jsontext.Value(append([]byte(nil), b...))
	if err := v.Canonicalize(); err != nil {
		return nil, err
	}
	return v, nil
}

// Marshal returns the JCS form of v as encoding/json encodes it (numbers
// decoded as json.Number keep their text until canonicalized). The JSON is
// written by warden.AppendJSONValue, encoding/json's bytes without its
// reflection for the decoded values ACS messages are made of (encoding/json
// itself for any other type): Marshal was 11 % of an ACS step's CPU under
// bench/compare.sh, six tenths of it in encoding/json.
func Marshal(v any) ([]byte, error) {
	b, err := warden.AppendJSONValue(make([]byte, 0, 512), v)
	if err != nil {
		return nil, err
	}
	val := jsontext.Value(b)
	if err := val.Canonicalize(); err != nil {
		return nil, err
	}
	return val, nil
}
