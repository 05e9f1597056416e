package aos

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/wardenhq/warden/pipeline"

	gojson "github.com/goccy/go-json"
	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
)

// BenchmarkDecode measures the hot path on the 1.7 KB seed request
// (steps/knowledgeRetrieval): "warden" is what the endpoint does (parse,
// check the envelope, validate params, build the event and its views);
// "parse_only" is the single-pass parser alone (the map plus the raw spans);
// "encoding_json" and "goccy" only decode the body into a map, for
// comparison; "handle" adds the chain (one allow guardian, no store) and
// the response encoding.
func BenchmarkDecode(b *testing.B) {
	body := readExample(b, "seed000_05_steps_knowledgeRetrieval")
	h, _ := newTestHandler(fixed(warden.Decision{Verdict: warden.Allow}))
	b.Run("warden", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			st := newParseState()
			calls, _, err := st.parseBody(body, 0)
			if err != nil {
				b.Fatal(err)
			}
			c := calls[0]
			method, params, rerr := c.check()
			if rerr != nil {
				b.Fatal(rerr)
			}
			if _, _, rerr := h.decodeEvent(c, method, params); rerr != nil {
				b.Fatal(rerr)
			}
			st.release()
		}
	})
	b.Run("parse_only", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			st := newParseState()
			if _, _, err := st.parseBody(body, 0); err != nil {
				b.Fatal(err)
			}
			st.release()
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("goccy", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var m map[string]any
			if err := gojson.Unmarshal(body, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("handle", func(b *testing.B) {
		d := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "allow",
			Handler: fixed(warden.Decision{Verdict: warden.Allow})}), Views: catalog.Views})
		h := NewHandler(d, Options{})
		ctx := context.Background()
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if h.Handle(ctx, body) == nil {
				b.Fatal("no response")
			}
		}
	})
}
