package mcpgate

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// The spec's encoding examples (2026-07-28, Streamable HTTP, "Value
// Encoding").
func TestEncodeValue(t *testing.T) {
	for in, want := range map[string]string{
		"us-west1":           "us-west1",
		"Hello, 世界":          "=?base64?SGVsbG8sIOS4lueVjA==?=",
		" padded ":           "=?base64?IHBhZGRlZCA=?=",
		"line1\nline2":       "=?base64?bGluZTEKbGluZTI=?=",
		"=?base64?literal?=": "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=",
		"":                   "",
		"a b":                "a b",
		"tab\tinside":        "=?base64?dGFiCWluc2lkZQ==?=",
	} {
		if got := encodeValue(in); got != want {
			t.Errorf("encodeValue(%q) = %q, want %q", in, got, want)
		}
		if back, ok := decodeValue(want); !ok || back != in {
			t.Errorf("decodeValue(%q) = %q, %v", want, back, ok)
		}
	}
	if _, ok := decodeValue("=?base64?not base64?="); ok {
		t.Error("invalid base64 decoded")
	}
}

func TestParamText(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
		ok   bool
	}{
		{`"x"`, "x", true}, {`true`, "true", true}, {`false`, "false", true},
		{`42`, "42", true}, {`-7`, "-7", true}, {`42.0`, "42", true}, {`1e3`, "1000", true},
		{`9007199254740991`, "9007199254740991", true}, {`9007199254740993`, "", false},
		{`1.5`, "", false}, {`null`, "", false}, {`{}`, "", false}, {`[]`, "", false},
	} {
		var v any
		if err := json.Unmarshal([]byte(c.in), &v); err != nil {
			t.Fatal(err)
		}
		if got, ok := paramText(v); got != c.want || ok != c.ok {
			t.Errorf("paramText(%s) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestParamsOf(t *testing.T) {
	schema := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	tp := paramsOf(schema(lookupSchema))
	var got []string
	for _, b := range tp.bindings {
		got = append(got, strings.Join(b.path, ".")+"="+b.header)
	}
	if tp.invalid != "" || strings.Join(got, " ") != "count=Count flag=Flag key=Key region=Region where.zone=Zone" {
		t.Fatalf("bindings %v, invalid %q", got, tp.invalid)
	}
	for name, s := range map[string]string{
		"empty":             `{"properties":{"a":{"type":"string","x-mcp-header":""}}}`,
		"not a string":      `{"properties":{"a":{"type":"string","x-mcp-header":7}}}`,
		"space":             `{"properties":{"a":{"type":"string","x-mcp-header":"My Region"}}}`,
		"colon":             `{"properties":{"a":{"type":"string","x-mcp-header":"A:B"}}}`,
		"CRLF":              `{"properties":{"a":{"type":"string","x-mcp-header":"A\r\nX-Evil: 1"}}}`,
		"non-ASCII":         `{"properties":{"a":{"type":"string","x-mcp-header":"Régión"}}}`,
		"number":            `{"properties":{"a":{"type":"number","x-mcp-header":"A"}}}`,
		"object":            `{"properties":{"a":{"type":"object","x-mcp-header":"A"}}}`,
		"no type":           `{"properties":{"a":{"x-mcp-header":"A"}}}`,
		"duplicate (case)":  `{"properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"string","x-mcp-header":"a"}}}`,
		"duplicate, nested": `{"properties":{"a":{"type":"string","x-mcp-header":"A"},"o":{"type":"object","properties":{"b":{"type":"string","x-mcp-header":"A"}}}}}`,
	} {
		if tp := paramsOf(schema(s)); tp.invalid == "" || tp.bindings != nil {
			t.Errorf("%s: %+v, want invalid", name, tp)
		}
	}
	if tp := paramsOf(schema(lookupSchema)); tp.lenient {
		t.Error("lookup's schema marked lenient")
	}
	for _, s := range []string{
		`{"properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":["string","null"]}}}`,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"},"b":true}}`,
		`{"type":["object"],"properties":{"a":{"type":"string","x-mcp-header":"A"}}}`,
	} {
		if tp := paramsOf(schema(s)); !tp.lenient || len(tp.bindings) != 1 {
			t.Errorf("%s: %+v, want one lenient binding (the go-sdk reads none)", s, tp)
		}
	}
	// Annotations out of the properties chain are not bindings.
	if tp := paramsOf(schema(`{"properties":{"l":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}`)); len(tp.bindings) != 0 {
		t.Errorf("an annotation under items bound: %+v", tp)
	}
}

func TestStandardHeadersNameForm(t *testing.T) {
	m := map[string]any{"jsonrpc": "2.0", "id": 1.0, "method": "tools/call", "params": map[string]any{"name": "wetter_für_zürich"}}
	if got := standardHeaders(m, nil, "").Get(hdrName); got != encodeValue("wetter_für_zürich") {
		t.Errorf("no client form: %q", got)
	}
	if got := standardHeaders(m, nil, "wetter_für_zürich").Get(hdrName); got != "wetter_für_zürich" {
		t.Errorf("the client sent it as it is (go-sdk): %q", got)
	}
	if got := standardHeaders(m, nil, "other").Get(hdrName); got != encodeValue("wetter_für_zürich") {
		t.Errorf("the client's form of another name was used: %q", got)
	}
	m["params"] = map[string]any{"name": "plain"}
	if got := standardHeaders(m, nil, encodeValue("x")).Get(hdrName); got != "plain" {
		t.Errorf("plain name: %q", got)
	}
}

// FuzzHeaderValue: every value encodes to a header value HTTP carries
// unchanged (visible ASCII and inner spaces, no edge whitespace) that
// decodes back to it.
func FuzzHeaderValue(f *testing.F) {
	for _, s := range []string{"us-west1", "Hello, 世界", " padded ", "line1\nline2", "=?base64?literal?=", "=?base64?=", "", "\xff", "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := encodeValue(s)
		if !plainHeaderValue(enc) || strings.ContainsAny(enc, "\t") || strings.TrimSpace(enc) != enc {
			t.Fatalf("encodeValue(%q) = %q: not carried unchanged", s, enc)
		}
		if d, ok := decodeValue(enc); !ok || d != s {
			t.Fatalf("decodeValue(encodeValue(%q)) = %q, %v", s, d, ok)
		}
		_, _ = decodeValue(s) // never panics
	})
}

// FuzzStandardHeaders: for any schema and arguments, the headers rebuilt
// from a tools/call agree with it by the gateway's own check (but for an
// annotated argument that is no string, integer or boolean: it becomes no
// header, and the go-sdk server refuses the call as well), and carry
// only header-safe names and values.
func FuzzStandardHeaders(f *testing.F) {
	f.Add(lookupSchema, `{"region":"us-west1","key":"AKIA","count":42,"flag":true,"where":{"zone":"Zürich"}}`, "lookup")
	f.Add(`{"properties":{"a":{"type":"integer","x-mcp-header":"A"}}}`, `{"a":1e300}`, "n\u00e4me")
	f.Add(`{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}`, `{"a":null}`, " x ")
	f.Fuzz(func(t *testing.T, schema, args, name string) {
		var s any
		var a map[string]any
		if json.Unmarshal([]byte(schema), &s) != nil || json.Unmarshal([]byte(args), &a) != nil {
			return
		}
		tp := paramsOf(s)
		seen := map[string]bool{}
		for _, b := range tp.bindings {
			if !isToken(b.header) || seen[strings.ToLower(b.header)] {
				t.Fatalf("binding %+v", b)
			}
			seen[strings.ToLower(b.header)] = true
			if v, ok := argument(a, b.path); ok && v != nil {
				if _, prim := paramText(v); !prim {
					return // see above
				}
			}
		}
		m := map[string]any{"jsonrpc": "2.0", "id": 1.0, "method": "tools/call", "params": map[string]any{"name": name, "arguments": a}}
		hdr := standardHeaders(m, &tp, "")
		for k, vs := range hdr {
			if !isToken(k) || len(vs) != 1 || !plainHeaderValue(vs[0]) || strings.TrimSpace(vs[0]) != vs[0] {
				t.Fatalf("header %q: %q", k, vs)
			}
		}
		hdr.Set(hdrProtocolVersion, headersSince)
		if err := checkHeaders(http.Header(hdr), m, &tp); err != nil {
			t.Fatalf("rebuilt headers %v disagree with the body: %v", hdr, err)
		}
	})
}
