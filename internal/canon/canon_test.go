package canon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/jsonappend"

	"github.com/gowebpki/jcs"
)

// TestAgreesWithGowebpki: the same bytes as an independent RFC 8785
// implementation, for key order by UTF-16 code units, escapes, HTML
// characters, non-ASCII text and ES6 number forms.
func TestAgreesWithGowebpki(t *testing.T) {
	for _, in := range []string{
		`{"b":1,"a":{"z":[3,2,1],"y":null,"x":true}}`,
		`{"\u20ac":"€","\ud83d\ude00":"😀","a":"<tag> & \"q\" \\ \u0001 \n"}`,
		`{"n":[0,-0,1e21,1e-7,123456789012345678,1.5e300,0.000001,10.0,-1.25e-3]}`,
		`{"é":1,"e":2,"E":3,"ä":4}`,
		`[]`, `"x"`, `{"deep":{"deeper":{"deepest":[{"k":"v"}]}}}`,
	} {
		want, err := jcs.Transform([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		got, err := Transform([]byte(in))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s %v\nwant %s", in, got, err, want)
		}
	}
}

// TestMarshalNumbers: a json.Number keeps its value through Marshal.
func TestMarshalNumbers(t *testing.T) {
	got, err := Marshal(map[string]any{"b": json.Number("1.50"), "a": "<"})
	if err != nil || string(got) != `{"a":"<","b":1.5}` {
		t.Fatalf("%s %v", got, err)
	}
}

// marshalRef is Marshal as it was: encoding/json's bytes, canonicalized.
func marshalRef(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Transform(b)
}

// TestMarshalAgrees: Marshal writes what encoding/json followed by
// Transform writes, for decoded JSON values (as an ACS message is) and for
// values of other types (structs, json.Number, []string), and fails where
// encoding/json fails.
func TestMarshalAgrees(t *testing.T) {
	values := []any{
		nil, true, "x", 1.5, -0.0, 1e21, 1e-7, 123456789012345678.0, json.Number("1.50"),
		map[string]any{}, []any{}, []string{"b", "a"}, []any(nil), map[string]any(nil),
		map[string]any{"é": 1.0, "e": 2.0, "E": []any{"<tag> & \"q\" \\ \u0001 \n \u2028", nil}},
		map[string]any{"\u20ac": "€", "\U0001f600": "😀", "\ufb33": map[string]any{"z": 1.0, "a": 2.0}},
		struct {
			B int    `json:"b"`
			A string `json:"a"`
		}{1, "x"},
		// Integers, exact and past 2^53 (encoding/json's digits, parsed
		// back to the nearest float64 by JCS).
		0, -1, 42, 1 << 53, 1<<53 + 1, -(1<<53 + 1), math.MaxInt64, math.MinInt64, int64(1e15 + 3), int64(-7),
		// JSON as received: canonicalized in place, errors the longer way's.
		json.RawMessage(`"id-1"`), json.RawMessage(` { "b" : 1.50, "a" : [ 1e21 , "<&>" ] } `), json.RawMessage(`7`),
		json.RawMessage(nil), json.RawMessage{}, json.RawMessage(`{"a":`), json.RawMessage(`"\xff"`),
		json.RawMessage(`{"a":1,"a":2}`), json.RawMessage(`1e400`), json.RawMessage("\"\xff\""),
		[]string(nil), []string{}, []string{"<é>", "\xff"}, []string{"b", "a"},
		map[string]any{"id": json.RawMessage(`"x"`), "n": 3, "codes": []string{"default_decision"}, "list": []any{json.RawMessage(`{"z":0,"y":null}`), int64(5)}},
	}
	// Random decoded values, as json.Unmarshal makes them.
	rnd := rand.New(rand.NewPCG(1, 2))
	str := func() string {
		runes := []rune{'a', 'Z', 'é', '€', '😀', '<', '"', '\\', '\n', 0x01, 0x2028, 0xfb33}
		var b strings.Builder
		for range rnd.IntN(6) {
			b.WriteRune(runes[rnd.IntN(len(runes))])
		}
		return b.String()
	}
	var gen func(depth int) any
	gen = func(depth int) any {
		switch n := rnd.IntN(8); {
		case n == 0:
			return nil
		case n == 1:
			return rnd.IntN(2) == 0
		case n == 2:
			return rnd.NormFloat64() * math.Pow(10, float64(rnd.IntN(40)-20))
		case n == 3 || depth > 3:
			return str()
		case n < 6:
			m := map[string]any{}
			for range rnd.IntN(5) {
				m[str()+fmt.Sprint(rnd.IntN(3))] = gen(depth + 1)
			}
			return m
		default:
			a := make([]any, rnd.IntN(4))
			for i := range a {
				a[i] = gen(depth + 1)
			}
			return a
		}
	}
	for range 2000 {
		values = append(values, gen(0))
	}
	for _, v := range values {
		got, err := Marshal(v)
		want, wantErr := marshalRef(v)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("%#v:\n got %s %v\nwant %s %v", v, got, err, want, wantErr)
		}
	}
	if _, err := Marshal(map[string]any{"n": math.NaN()}); err == nil {
		t.Error("Marshal of a NaN: no error")
	}
}

func FuzzAgree(f *testing.F) {
	f.Add([]byte(`{"a":[1,2.5,"x"],"b":{"c":null}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		want, err1 := jcs.Transform(b)
		got, err2 := Transform(b)
		if err1 == nil && err2 == nil && !bytes.Equal(got, want) {
			t.Fatalf("%q: %s vs %s", b, got, want)
		}
	})
}

func BenchmarkCanonical(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":"5f2f0b68","method":"steps/toolCallRequest","params":{"acs_version":"0.1.0","request_id":"4c97c374-6928-45a4-8aaf-2be34931c997","timestamp":"2026-11-25T19:07:20.123Z","metadata":{"agent_id":"agent-1","session_id":"9a7a6a69"},"payload":{"tool":{"name":"search"},"arguments":{"q":{"value":"weather <today> é"},"limit":{"value":10}}}}}`)
	b.Run("jsontext", func(b *testing.B) {
		for b.Loop() {
			Transform(msg)
		}
	})
	b.Run("gowebpki", func(b *testing.B) {
		for b.Loop() {
			jcs.Transform(msg)
		}
	})
}

// BenchmarkMarshal: Marshal of a decoded ACS request, against the
// encoding/json path it replaced (marshalRef).
func BenchmarkMarshal(b *testing.B) {
	var v any
	if err := json.Unmarshal([]byte(`{"jsonrpc":"2.0","id":"5f2f0b68","method":"steps/toolCallRequest","params":{"acs_version":"0.1.0","request_id":"4c97c374-6928-45a4-8aaf-2be34931c997","timestamp":"2026-11-25T19:07:20.123Z","metadata":{"agent_id":"agent-1","session_id":"9a7a6a69"},"payload":{"tool":{"name":"search"},"arguments":{"q":{"value":"weather <today> é"},"limit":{"value":10}}}}}`), &v); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		fn   func(any) ([]byte, error)
	}{{"direct", Marshal}, {"appender", marshalVia}, {"encoding-json", marshalRef}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.fn(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// marshalVia is Marshal's longer way alone: encoding/json's bytes
// canonicalized by jsontext.
func marshalVia(v any) ([]byte, error) {
	b, err := jsonappend.Value(nil, v)
	if err != nil {
		return nil, err
	}
	return Transform(b)
}

// FuzzMarshalDirect: for any JSON text decoded as ACS messages are (numbers
// as json.Number, and as float64), and for any text kept as a
// json.RawMessage, Marshal's direct path writes what the longer way
// writes, and fails where it fails.
func FuzzMarshalDirect(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1.50,-0,1e21,1e-7,"x"]}`, `{"\ud83d\ude00":1,"\ufb33":2,"\u20ac":3,"é":4,"E":5}`,
		`["<&>\u2028\u0001\"\\",1e400,-0.0,123456789012345678]`, `{"":null,"t":true,"f":false}`, "[\"\xff\"]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// The same text as a json.RawMessage inside a message (as the ACS
		// handler keeps an id or a payload), beside an int.
		m := map[string]any{"raw": json.RawMessage(b), "n": len(b), "m": int64(-len(b)), "s": []string{string(b), "x"}}
		got, err := Marshal(m)
		want, wantErr := marshalVia(m)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("%q as json.RawMessage:\n got %s %v\nwant %s %v", b, got, err, want, wantErr)
		}
		for _, useNumber := range []bool{true, false} {
			d := json.NewDecoder(bytes.NewReader(b))
			if useNumber {
				d.UseNumber()
			}
			var v any
			if d.Decode(&v) != nil {
				return
			}
			got, err := Marshal(v)
			want, wantErr := marshalVia(v)
			if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
				t.Fatalf("%q (UseNumber %v):\n got %s %v\nwant %s %v", b, useNumber, got, err, want, wantErr)
			}
		}
	})
}
