package conf

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
)

// KeyMaterial decodes a secret key written in a config file: ${VAR}s
// expanded (ExpandEnv), then "hex:<hex>", "base64:<base64>" (padded or
// not) or the text's own bytes. Its errors never hold the key; the caller
// checks the length.
func KeyMaterial(s string) ([]byte, error) {
	s, err := ExpandEnv(s)
	if err != nil {
		return nil, err
	}
	if h, ok := strings.CutPrefix(s, "hex:"); ok {
		key, err := hex.DecodeString(h)
		if err != nil {
			return nil, errors.New("hex: not valid hexadecimal")
		}
		return key, nil
	}
	if b, ok := strings.CutPrefix(s, "base64:"); ok {
		key, err := base64.StdEncoding.DecodeString(b)
		if err != nil {
			if key, err = base64.RawStdEncoding.DecodeString(b); err != nil {
				return nil, errors.New("base64: not valid base64")
			}
		}
		return key, nil
	}
	return []byte(s), nil
}
