package replay

import (
	"encoding/json"
	"reflect"
	"testing"
)

var decodeSeeds = []string{
	`{}`,
	`{"a":1,"b":[true,false,null,"x",{"c":-2.5e3}],"d":{"e":""}}`,
	`{"dup":1,"dup":2}`,
	`{"s":"\u00e9\ud83d\ude00\n\"","k\u0000":0}`,
	"{\"bad\":\"\xff\xfe\"}",
	`{"lone":"\ud800"}`,
	` { "spaced" : [ 1 , 2 ] } `,
	`{"big":1e400}`,
	`[1,2]`,
	`"text"`,
	`{"a":1} {"b":2}`,
	`{"a":`,
	`{"a":1,}`,
}

// TestDecodeObject: decodeObject reads what encoding/json reads into a
// map[string]any, and refuses what it refuses.
func TestDecodeObject(t *testing.T) {
	for _, s := range decodeSeeds {
		t.Run(s, func(t *testing.T) { sameAsEncodingJSON(t, []byte(s)) })
	}
}

func FuzzDecodeObject(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(sameAsEncodingJSON)
}

func sameAsEncodingJSON(t *testing.T, b []byte) {
	var want map[string]any
	werr := json.Unmarshal(b, &want)
	got, err := decodeObject(b)
	switch {
	case werr == nil && want == nil: // null: Event handles it before decoding
	case werr != nil && err == nil:
		t.Fatalf("%q: decoded %v; encoding/json refuses it: %v", b, got, werr)
	case werr == nil && err != nil:
		t.Fatalf("%q: %v; encoding/json decodes %v", b, err, want)
	case werr == nil && !reflect.DeepEqual(got, want):
		t.Fatalf("%q: decoded %#v, encoding/json %#v", b, got, want)
	}
}
