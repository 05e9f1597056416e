package canon

import (
	"bytes"
	"encoding/json"
	"testing"

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
