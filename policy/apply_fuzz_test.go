package policy

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/wardenhq/warden/detect"
	wpayload "github.com/wardenhq/warden/internal/payload"
)

// fuzzOp is the JSON form of one op for FuzzApply.
type fuzzOp struct {
	Set *struct {
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	} `json:"set"`
	Patch  json.RawMessage `json:"patch"`
	Redact []string        `json:"redact"`
	Paths  []string        `json:"paths"`
}

// FuzzApply feeds random payloads and ops to the appliers: they must not
// panic, must leave the input payload alone, and must yield a JSON object.
func FuzzApply(f *testing.F) {
	f.Add(`{"a": {"b": [1, "x@example.com"]}, "context": {"k": "v"}}`, `{"set": {"path": "/a/b/-", "value": {"c": null}}}`)
	f.Add(`{"a": [1, 2]}`, `{"patch": [{"op": "move", "from": "/a/0", "path": "/b"}]}`)
	f.Add(`{"t": "card 4111 1111 1111 1111"}`, `{"redact": ["pii"], "paths": ["/t", "/nope/x"]}`)
	f.Fuzz(func(t *testing.T, payload, opJSON string) {
		var doc map[string]any
		if json.Unmarshal([]byte(payload), &doc) != nil || doc == nil {
			return
		}
		var o fuzzOp
		if json.Unmarshal([]byte(opJSON), &o) != nil {
			return
		}
		orig, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		work := wpayload.Clone(doc)
		var out map[string]any
		switch {
		case o.Set != nil:
			toks, err := parsePointer(o.Set.Path)
			if err != nil {
				return
			}
			var v any
			if json.Unmarshal(o.Set.Value, &v) != nil {
				return
			}
			out, _, _ = setPointer(work, toks, v)
		case o.Patch != nil:
			out, _, _ = applyPatch(work, o.Patch)
		case o.Redact != nil:
			kinds, err := detect.ExpandKinds(o.Redact)
			if err != nil {
				return
			}
			var paths [][]string
			for _, p := range o.Paths {
				toks, err := parsePointer(p)
				if err != nil {
					return
				}
				paths = append(paths, toks)
			}
			redactDoc(work, kinds, paths)
			out = work
		default:
			return
		}
		if out == nil {
			t.Fatal("nil result")
		}
		res, err := json.Marshal(out)
		if err != nil || !json.Valid(res) {
			t.Fatalf("result is not JSON: %v", err)
		}
		if after, _ := json.Marshal(doc); !bytes.Equal(orig, after) {
			t.Fatalf("input payload mutated:\n%s\n%s", orig, after)
		}
	})
}
