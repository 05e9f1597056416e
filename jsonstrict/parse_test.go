package jsonstrict

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// ctxJSON is an AOS request context, for the seeds.
const ctxJSON = `"context":{"agent":{"id":"a1","name":"A"},"session":{"id":"s1"},"turnId":"t1","stepId":"st1","timestamp":"2026-01-01T00:00:00Z"}`

// parseSeeds are AOS requests and hand-picked error and edge cases, plus the
// AOS seed examples when WARDEN_SHARED names the shared/ tree.
func parseSeeds(t testing.TB) [][]byte {
	seeds := [][]byte{
		[]byte(``), []byte(`{`), []byte(`[]`), []byte(`[1,{}]`), []byte(`null`), []byte("{\"\x97\":1e700}"),
		[]byte(`{"jsonrpc":"2.0","id":1.0,"method":"ping"}`),
		[]byte(`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`),
		[]byte(`{"jsonrpc":"2.0","id":"x","method":"steps/message","params":"hi"}`),
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"steps/foo","params":{}}`),
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"steps/message","params":{` + ctxJSON + `,"message":{"role":"user","content":[{"kind":"text","text":"a\u00e9\ud83d\ude00\ud800"}]}}}`),
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"protocols/MCP","params":{"message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}}}`),
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"protocols/A2A","params":{"jsonrpc":"2.0","id":1,"result":{"role":"agent","parts":[]}}}`),
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"payload":{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t"}},"context":{"from":{"agent":{"name":"n"}}}}}`),
		[]byte(`[{"jsonrpc":"2.0","method":"steps/memoryStore","params":{` + ctxJSON + `,"memory":["x"]}},{"jsonrpc":"2.0","id":2,"method":"ping"}]`),
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"steps/toolCallResult","params":{` + ctxJSON + `,"executionId":"e","result":{"outputs":[],"isError":false}}}`),
		[]byte(`{"a":1,"a":2}`), []byte(`{"p":{"Name":1,"name":2}}`), []byte(`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`),
		[]byte("{\"a\":\"\xff\"}"), []byte(`[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]`), []byte(`{"a":1e999}`),
	}
	dir := os.Getenv("WARDEN_SHARED")
	if dir == "" {
		return seeds
	}
	files, err := filepath.Glob(filepath.Join(dir, "aos", "examples", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("seed examples not found in %s (WARDEN_SHARED): %v", dir, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	return seeds
}

// FuzzParse checks the parser against encoding/json and the reference
// checker (reference_test.go): the same verdict on validity, the same
// decoded value.
func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if msg := differential(b); msg != "" {
			t.Fatal(msg)
		}
	})
}

// differential parses b with the parser and encoding/json and says how
// they disagree ("" when they agree). The parser refuses what readers would
// read differently (duplicate keys, keys differing only in case, invalid
// UTF-8, lone surrogates) exactly when the reference checker does so —
// with the same message when both name a key problem (the reference
// reports a key problem before an encoding one, the parser the first in
// the text) — and otherwise decodes as encoding/json does.
func differential(b []byte) string {
	var p Parser
	p.Init(string(b))
	got, err := p.Value()
	if err == nil {
		err = p.End()
	}
	var amb, ramb *Error
	ref := checkRef(b)
	isKey := func(msg string) bool {
		return strings.HasPrefix(msg, "duplicate key") || strings.HasPrefix(msg, "keys ")
	}
	if errors.As(err, &amb) || errors.As(ref, &ramb) {
		var v any
		if err != nil && !errors.As(err, &amb) && json.Unmarshal(b, &v) != nil {
			// Not JSON at all: the parser stops at the first syntax or
			// range error, before its end-of-input encoding check, where
			// the reference names the encoding first ({"\x97":1e700}).
			return ""
		}
		if !errors.As(err, &amb) || !errors.As(ref, &ramb) || isKey(amb.Msg) && isKey(ramb.Msg) && amb.Error() != ref.Error() {
			return fmt.Sprintf("%q: parser %v, reference %v", b, err, ref)
		}
		return ""
	}
	var want any
	werr := json.Unmarshal(b, &want)
	if (err == nil) != (werr == nil) {
		if werr != nil && strings.Contains(werr.Error(), "exceeded max depth") {
			return ""
		}
		return fmt.Sprintf("%q: parser error %v, encoding/json error %v", b, err, werr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		return fmt.Sprintf("%q: parser %#v, encoding/json %#v", b, got, want)
	}
	return ""
}

// TestParseMatchesEncodingJSON runs the differential check on the seeds.
func TestParseMatchesEncodingJSON(t *testing.T) {
	for _, b := range append(parseSeeds(t), []byte(`"\ud800\udc00\ud800x\u0000\/"`), []byte(`-0.5e-3`), []byte(`01`), []byte(`1.`),
		[]byte(`{"a":1,"a":2}`), []byte(`{"p":{"x":[{"Name":1,"name":2}]}}`), []byte("\"\xed\xa0\x80\"")) {
		if msg := differential(b); msg != "" {
			t.Error(msg)
		}
	}
}
