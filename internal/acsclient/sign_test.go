package acsclient

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHKDF proves the HKDF call against RFC 5869's SHA-256 vectors: test
// case 1 (with salt and info) through derive, and test case 3 (no salt, no
// info) through derive and through SessionKey, whose 32 bytes are the first
// 32 of the 42 (HKDF-Expand output is a prefix-stable stream).
func TestHKDF(t *testing.T) {
	ikm := unhex(t, strings.Repeat("0b", 22))
	tests := []struct {
		name string
		salt []byte
		info string
		n    int
		okm  string
	}{
		{"RFC 5869 A.1", unhex(t, "000102030405060708090a0b0c"), string(unhex(t, "f0f1f2f3f4f5f6f7f8f9")), 42,
			"3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"},
		{"RFC 5869 A.3", nil, "", 42,
			"8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := derive(ikm, tt.salt, tt.info, tt.n)
			if err != nil {
				t.Fatal(err)
			}
			if hex.EncodeToString(got) != tt.okm {
				t.Errorf("OKM = %x, want %s", got, tt.okm)
			}
		})
	}
	k, err := SessionKey(ikm, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := tests[1].okm[:64]; hex.EncodeToString(k) != want {
		t.Errorf("SessionKey(A.3 IKM, \"\") = %x, want %s", k, want)
	}
	k1, _ := SessionKey(ikm, "5f0c6f3e-8a4b-4f7e-9d7e-2b8c9a0d1e2f")
	k2, _ := SessionKey(ikm, "5f0c6f3e-8a4b-4f7e-9d7e-2b8c9a0d1e30")
	if len(k1) != 32 || hex.EncodeToString(k1) == hex.EncodeToString(k2) {
		t.Errorf("session keys of two sessions: %x and %x; want 32 distinct bytes", k1, k2)
	}
}

// TestCanonical checks the JCS form of small inputs decoded with Decode:
// members sorted by UTF-16 code units (U+1F600, a surrogate pair starting
// D83D, sorts before U+FB33 although its UTF-8 sorts after), strings
// unescaped except as RFC 8785 requires, numbers in ECMAScript form.
func TestCanonical(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b": 2, "a": 1}`, `{"a":1,"b":2}`},
		{`{"z": {"y": null, "x": [true, false]}, "é": "café €", "a": "\u00e9"}`,
			`{"a":"é","z":{"x":[true,false],"y":null},"é":"café €"}`},
		{`{"\ufb33": 1, "\ud83d\ude00": 2, "\u20ac": 3, "1": 4}`,
			`{"1":4,"€":3,"😀":2,"דּ":1}`},
		{`{"html": "<a&b>", "ctl": "\u000f\n", "q": "\"\\"}`,
			`{"ctl":"\u000f\n","html":"<a&b>","q":"\"\\"}`},
		{`{"n": [1.0, 1e21, 1E-7, -0, 100, 12345678901234567890]}`,
			`{"n":[1,1e+21,1e-7,0,100,12345678901234567000]}`},
	}
	for _, tt := range tests {
		v, err := Decode([]byte(tt.in))
		if err != nil {
			t.Fatalf("Decode(%s): %v", tt.in, err)
		}
		got, err := Canonical(v)
		if err != nil {
			t.Fatalf("Canonical(%s): %v", tt.in, err)
		}
		if string(got) != tt.want {
			t.Errorf("Canonical(%s)\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
	if _, err := Decode([]byte(`{} {}`)); err == nil {
		t.Error("Decode accepted two values")
	}
}

func decodeObj(t *testing.T, s string) map[string]any {
	t.Helper()
	m, err := DecodeObject([]byte(s))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return m
}

func sumHex(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestEntryHashChain computes a three-entry chain by hand — the JCS forms
// written out literally, SHA-256 over them and the raw previous hash — and
// checks EntryHash and VerifyChain against it, then breaks it.
func TestEntryHashChain(t *testing.T) {
	entries := []map[string]any{
		decodeObj(t, `{"step_type": "sessionStart", "step_id": "s1", "entry_id": "e1", "previous_hash": null,
			"timestamp": "2026-01-02T03:04:05Z"}`),
		decodeObj(t, `{"step_id": "s2", "entry_id": "e2", "step_type": "toolCallRequest", "seq": 2.0,
			"request_hash": "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"}`),
		decodeObj(t, `{"turn_id": "t-1", "step_type": "agentResponse", "step_id": "s3", "entry_id": "e3",
			"provenance_summary": {"origins_seen": ["user_input", "tool_output"], "entry_count": 3}, "note": "caf\u00e9"}`),
	}
	canon := []string{
		`{"entry_id":"e1","step_id":"s1","step_type":"sessionStart","timestamp":"2026-01-02T03:04:05Z"}`,
		`{"entry_id":"e2","request_hash":"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff","seq":2,"step_id":"s2","step_type":"toolCallRequest"}`,
		`{"entry_id":"e3","note":"café","provenance_summary":{"entry_count":3,"origins_seen":["user_input","tool_output"]},"step_id":"s3","step_type":"agentResponse","turn_id":"t-1"}`,
	}
	h1 := sumHex([]byte(canon[0]))
	h2 := sumHex([]byte(canon[1]), unhex(t, h1))
	h3 := sumHex([]byte(canon[2]), unhex(t, h2))
	want := []string{h1, h2, h3}

	prev := ""
	for i, e := range entries {
		got, err := EntryHash(e, prev)
		if err != nil {
			t.Fatal(err)
		}
		if got != want[i] {
			t.Fatalf("EntryHash(entry %d) = %s, want %s", i, got, want[i])
		}
		if i > 0 {
			e["previous_hash"] = prev
		}
		e["entry_hash"] = got
		prev = got
	}
	head, err := VerifyChain(entries)
	if err != nil || head != h3 {
		t.Fatalf("VerifyChain = %q, %v; want %s", head, err, h3)
	}
	// entry_hash and previous_hash do not enter the hash.
	if again, _ := EntryHash(entries[2], h2); again != h3 {
		t.Errorf("EntryHash changed once entry_hash/previous_hash were set: %s", again)
	}

	breaks := []struct {
		name   string
		mutate func(es []map[string]any)
		want   string
	}{
		{"content changed", func(es []map[string]any) { es[1]["step_id"] = "s2x" }, "entry 1 (entry_id e2): entry_hash"},
		{"link broken", func(es []map[string]any) { es[2]["previous_hash"] = h1 }, "entry 2 (entry_id e3): previous_hash"},
		{"root has a previous hash", func(es []map[string]any) { es[0]["previous_hash"] = h3 }, "entry 0 (entry_id e1): previous_hash"},
		{"entry dropped", func(es []map[string]any) { copy(es[1:], es[2:]); es[2] = nil }, "entry 1 (entry_id e3): previous_hash"},
		{"uppercase hash", func(es []map[string]any) { es[2]["entry_hash"] = strings.ToUpper(h3) }, "not 64 lowercase hex"},
	}
	for _, b := range breaks {
		t.Run(b.name, func(t *testing.T) {
			es := make([]map[string]any, len(entries))
			for i, e := range entries {
				es[i] = map[string]any{}
				for k, v := range e {
					es[i][k] = v
				}
			}
			b.mutate(es)
			if es[len(es)-1] == nil {
				es = es[:len(es)-1]
			}
			_, err := VerifyChain(es)
			if err == nil || !strings.Contains(err.Error(), b.want) {
				t.Errorf("VerifyChain = %v, want an error containing %q", err, b.want)
			}
		})
	}
	if _, err := EntryHash(entries[0], "abc"); err == nil {
		t.Error("EntryHash accepted a short previous hash")
	}
}

// TestRequestHash hashes a params object, signature included, against its
// literal JCS form.
func TestRequestHash(t *testing.T) {
	params := decodeObj(t, `{"timestamp": "2026-01-02T03:04:05Z", "acs_version": "0.1.0",
		"request_id": "7c9e6679-7425-40de-944b-e07fc1f90ae7", "payload": {"tool": {"name": "sh"}, "arguments": {}},
		"metadata": {"session_id": "5f0c6f3e-8a4b-4f7e-9d7e-2b8c9a0d1e2f", "agent_id": "a"},
		"signature": {"value": "AAAA", "key_id": "k1", "algorithm": "HMAC-SHA256"}}`)
	lit := `{"acs_version":"0.1.0","metadata":{"agent_id":"a","session_id":"5f0c6f3e-8a4b-4f7e-9d7e-2b8c9a0d1e2f"},"payload":{"arguments":{},"tool":{"name":"sh"}},"request_id":"7c9e6679-7425-40de-944b-e07fc1f90ae7","signature":{"algorithm":"HMAC-SHA256","key_id":"k1","value":"AAAA"},"timestamp":"2026-01-02T03:04:05Z"}`
	got, err := RequestHash(params)
	if err != nil {
		t.Fatal(err)
	}
	if want := sumHex([]byte(lit)); got != want {
		t.Errorf("RequestHash = %s, want %s", got, want)
	}
}
