package mcpgate

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/sqlite"
)

// BenchmarkToolsListAnswer decides one tools/list answer of 14 tools (as
// server-everything lists) with the built-in pack and a SQLite trace:
// without pinning, and with pins on the same SQLite store (every tool
// pinned and unchanged: a pins read, the hashes, an AgBOM write).
func BenchmarkToolsListAnswer(b *testing.B) {
	tools := make([]any, 14)
	for i := range tools {
		tools[i] = map[string]any{"name": fmt.Sprintf("tool-%02d", i), "description": "Does thing number " + fmt.Sprint(i),
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}}
	}
	raw, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "result": map[string]any{"tools": tools}})
	for _, pinned := range []bool{false, true} {
		b.Run(fmt.Sprintf("pins=%v", pinned), func(b *testing.B) {
			st, err := sqlite.Open(b.TempDir(), sqlite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			dec := benchDeciderOn(b, st)
			g := &gate{dec: dec, server: "everything", maxBatch: 100}
			if pinned {
				g.pins = &Pins{Store: st}
			}
			l := &listing{}
			ctx := context.Background()
			var m map[string]any
			_ = json.Unmarshal(raw, &m)
			msg := &message{raw: raw, m: m}
			if v := g.decideList(ctx, msg, warden.Inbound, "s1", answered{}, l); v.deny {
				b.Fatalf("denied: %s", v.reason)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if v := g.decideList(ctx, msg, warden.Inbound, "s1", answered{}, l); v.deny {
					b.Fatal(v.reason)
				}
			}
		})
	}
}

// benchDeciderOn decides with the built-in pack and records to st.
func benchDeciderOn(b *testing.B, st audit.Store) *pipeline.Pipeline {
	set, err := policy.Builtin()
	if err != nil {
		b.Fatal(err)
	}
	eng := policy.NewEngine(set, policy.Options{})
	return pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "policy", Kind: "policy", Handler: eng}), Views: catalog.Views, Store: st})
}
