package redact

import "testing"

var benchInput = []byte(`{"message":{"role":"user","id":"m2","content":[{"kind":"text","text":"What is on my calendar today?"}]},"context":{"session":{"id":"demo"}}}`)

func BenchmarkJSONNoMatch(b *testing.B) {
	r := New(make([]byte, KeySize))
	b.ReportAllocs()
	for b.Loop() {
		r.JSON(benchInput)
	}
}
