package acs

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
)

// BenchmarkStep is one signed steps/toolCallRequest through the handler
// on an in-memory store: parse, validate, verify, replay check, decide
// (the test policies, recorded), chain append, sign, encode. The store's
// own cost on SQLite is sqlite.BenchmarkACSStep.
func BenchmarkStep(b *testing.B) {
	f := newFixture(b, nil)
	s := f.session()
	s.hello()
	bodies := make([][]byte, b.N)
	for i := range bodies {
		m := s.msg("steps/toolCallRequest", toolCall("search", map[string]any{"q": "weather in Barcelona", "limit": 10}), func(p map[string]any) {
			p["request_id"] = uuid.NewString()
		})
		bodies[i], _ = json.Marshal(m)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		out := f.h.Handle(ctx, bodies[i], "http")
		if len(out) < 100 || out[2] != 'i' && out[2] != 'j' {
			b.Fatalf("%s", out)
		}
	}
}
