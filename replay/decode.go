package replay

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// A record's JSON is read as the surfaces read a request live (the last of
// duplicate names wins, invalid UTF-8 becomes U+FFFD, numbers are
// float64): the surfaces refused ambiguous JSON before deciding, so these
// only matter for records that hold none.
var (
	textOpts   = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}
	decodeOpts = json.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
)

// decodeViews decodes a record's views into v (json v2 into the struct:
// 4 µs a record in BenchmarkReplay's trace, encoding/json takes twice as
// long).
func decodeViews(b []byte, v *views) error { return json.Unmarshal(b, v, decodeOpts) }

// payloadDecoder decodes a record's input into the map the policies read,
// token by token: 4 µs a record in BenchmarkReplay's trace, where
// encoding/json took 5.5 and json v2 7 (both spend it in reflection), and
// the input is the larger half of a record's JSON work. Reused through
// decoders, never shared.
type payloadDecoder struct {
	d   jsontext.Decoder
	buf bytes.Buffer // jsontext reads a bytes.Buffer in place, without a copy
}

var decoders = sync.Pool{New: func() any { return new(payloadDecoder) }}

var errNotObject = errors.New("not a JSON object")

// decodeObject decodes b, which must hold one JSON object, as
// encoding/json decodes it into a map[string]any.
func decodeObject(b []byte) (map[string]any, error) {
	pd := decoders.Get().(*payloadDecoder)
	defer decoders.Put(pd)
	pd.buf = *bytes.NewBuffer(b)
	pd.d.Reset(&pd.buf, textOpts...)
	defer func() { // keep nothing of b in the pool
		pd.buf = bytes.Buffer{}
		pd.d.Reset(&pd.buf)
	}()
	if k := pd.d.PeekKind(); k != '{' {
		if _, err := pd.d.ReadToken(); err != nil {
			return nil, err
		}
		return nil, errNotObject
	}
	v, err := value(&pd.d)
	if err != nil {
		return nil, err
	}
	if _, err := pd.d.ReadToken(); err != io.EOF {
		if err == nil {
			err = errors.New("data after the object")
		}
		return nil, err
	}
	return v.(map[string]any), nil
}

// value decodes the next value of d.
func value(d *jsontext.Decoder) (any, error) {
	tok, err := d.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case '{':
		m := map[string]any{}
		for d.PeekKind() != '}' {
			k, err := d.ReadToken()
			if err != nil {
				return nil, err
			}
			name := k.String() // before the next read voids k
			if m[name], err = value(d); err != nil {
				return nil, err
			}
		}
		_, err = d.ReadToken()
		return m, err
	case '[':
		a := []any{}
		for d.PeekKind() != ']' {
			v, err := value(d)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err = d.ReadToken()
		return a, err
	case '"':
		return tok.String(), nil
	case '0':
		return tok.Float()
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case 'n':
		return nil, nil
	}
	return nil, fmt.Errorf("unexpected %v", tok)
}
