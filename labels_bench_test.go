package warden_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/wardenhq/warden/labels"
	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/sqlite"
	"github.com/wardenhq/warden/storetest"
)

// BenchmarkDecideLabels measures one decision of the Decider — views,
// the built-in pack (its lethal-trifecta policies included), the record —
// without session labels and with them (docs/BENCHMARKS.md):
//
//   - off: no LabelCache (session.labels always empty);
//   - cached: labels on, the session's labels in the cache, nothing to add
//     (the steady state of a session: each label is written once);
//   - new-session: labels on, every step a new session whose label is
//     written through to the store (storetest.Mem; sqlite: the SQLite
//     store in a temporary directory, the write a transaction of its own).
func BenchmarkDecideLabels(b *testing.B) {
	pack, err := policy.Builtin()
	if err != nil {
		b.Fatal(err)
	}
	chain := warden.NewChain(warden.Allow, warden.Step{Name: "policy", Handler: policy.NewEngine(pack, policy.Options{})})
	event := func(session string) *warden.Event {
		return &warden.Event{Name: "steps/toolCallRequest", Surface: warden.SurfaceAOS, Payload: map[string]any{
			"toolCallRequest": map[string]any{"executionId": "e1", "toolId": "read_file",
				"inputs": []any{map[string]any{"name": "path", "value": "/home/ann/.ssh/id_rsa"}}},
			"context": map[string]any{"session": map[string]any{"id": session}},
		}}
	}
	ctx := context.Background()
	run := func(b *testing.B, d *pipeline.Pipeline, session func(i int) string) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := d.Decide(ctx, event(session(i))); err != nil {
				b.Fatal(err)
			}
		}
	}
	same := func(int) string { return "s1" }
	fresh := func(i int) string { return fmt.Sprintf("s-%d", i) }

	b.Run("off", func(b *testing.B) {
		d := pipeline.New(pipeline.Options{Chain: chain, Views: catalog.Views, Store: storetest.NewMem()})
		run(b, d, same)
	})
	b.Run("cached", func(b *testing.B) {
		mem := storetest.NewMem()
		d := pipeline.New(pipeline.Options{Chain: chain, Views: catalog.Views, Store: mem, Labels: labels.NewCache(mem, 0, 0)})
		run(b, d, same)
	})
	b.Run("new-session", func(b *testing.B) {
		mem := storetest.NewMem()
		d := pipeline.New(pipeline.Options{Chain: chain, Views: catalog.Views, Store: mem, Labels: labels.NewCache(mem, 0, 0)})
		run(b, d, fresh)
	})
	b.Run("new-session-sqlite", func(b *testing.B) {
		st, err := sqlite.Open(b.TempDir(), sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		d := pipeline.New(pipeline.Options{Chain: chain, Views: catalog.Views, Store: storetest.NewMem(), Labels: labels.NewCache(st, 0, 0)})
		run(b, d, fresh)
	})
}
