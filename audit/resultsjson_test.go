package audit_test

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/jsonappend"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"

	"github.com/wardenhq/warden/internal/jsontest"
)

// TestAppendResultsMatchesEncodingJSON checks AppendResults against
// encoding/json on random results, patches (valid, spaced, escaped and
// invalid) included.
func TestAppendResultsMatchesEncodingJSON(t *testing.T) {
	g := jsontest.Gen{R: rand.New(rand.NewPCG(3, 4))}
	patches := []string{"", `[{"op":"replace","path":"/a","value":"<b>&\u2028"}]`, "{ \"a\" : [ 1 , 2 ] }\n", `{"a":`, `"x"`, "null"}
	for i := range 20000 {
		var rs []warden.Result
		if g.R.IntN(8) > 0 {
			rs = make([]warden.Result, g.R.IntN(4))
		}
		for j := range rs {
			rs[j] = warden.Result{
				Guardian: g.Str(), PolicyID: g.Str(), PolicyVersion: g.Str(), Decision: g.Str(), Mode: g.Str(),
				Reason: g.Str(), LatencyUS: g.R.Int64() >> g.R.IntN(64) * int64(1-2*g.R.IntN(2)), Error: g.Str(), Kind: g.Str(),
				Patch: json.RawMessage(patches[g.R.IntN(len(patches))]), Refused: g.Str(), PolicyRevision: g.Str(), Labels: g.Strs(),
			}
			if rs[j].Patch != nil && len(rs[j].Patch) == 0 && g.R.IntN(2) == 0 {
				rs[j].Patch = nil
			}
		}
		want, werr := json.Marshal(rs)
		got, gerr := audit.AppendResults([]byte("prefix"), rs)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("results %d: error %v, encoding/json's %v", i, gerr, werr)
		}
		if werr == nil && !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("results %d:\n got %s\nwant prefix%s", i, got, want)
		}
	}
}

// TestNewRecordJSONFields checks the JSON fields NewRecord builds (the
// input when the event has no Raw, the modified output, the views) against
// encoding/json on random payloads, and that a payload encoding/json
// refuses (a NaN) leaves the field nil as json.Marshal's error did.
func TestNewRecordJSONFields(t *testing.T) {
	g := jsontest.Gen{R: rand.New(rand.NewPCG(7, 8))}
	for i := range 5000 {
		e := &warden.Event{Name: g.Str(), SessionID: g.Str(), Agent: warden.Agent{ID: g.Str()}}
		e.Payload = g.Obj(0)
		if g.R.IntN(8) == 0 {
			e.Payload = nil
		}
		out := &warden.Outcome{Verdict: warden.Modify, Payload: g.Obj(0)}
		if g.R.IntN(4) == 0 {
			out.Verdict = warden.Allow
		}
		r := audit.NewRecord(e, out, time.Unix(0, 0))
		wantIn, err := json.Marshal(e.Payload)
		if err != nil {
			wantIn = nil
		}
		var wantOut []byte
		if out.Verdict == warden.Modify {
			if wantOut, err = json.Marshal(out.Payload); err != nil {
				wantOut = nil
			}
		}
		if !bytes.Equal(r.Input, wantIn) || !bytes.Equal(r.Output, wantOut) || !bytes.Equal(r.Views, e.ViewsJSON()) {
			t.Fatalf("record %d:\ninput  %s\nwant   %s\noutput %s\nwant   %s\nviews  %s\nwant   %s", i, r.Input, wantIn, r.Output, wantOut, r.Views, e.ViewsJSON())
		}
	}
	nan := map[string]any{"x": math.NaN()}
	if r := audit.NewRecord(&warden.Event{Payload: nan}, &warden.Outcome{Verdict: warden.Modify, Payload: nan}, time.Unix(0, 0)); r.Input != nil || r.Output != nil {
		t.Fatalf("a NaN payload encoded: input %q, output %q", r.Input, r.Output)
	}
}

// BenchmarkMarshalPayload is NewRecord's encoding of a payload without Raw
// (the SDK and hooks surfaces): the tool call of benchEvent as a payload.
func BenchmarkMarshalPayload(b *testing.B) {
	p := map[string]any{"toolCallRequest": map[string]any{"executionId": "69dbf4c3-be33-4694-a9f0-8d3a824c5d5b", "toolId": "search_calendar",
		"inputs": []any{map[string]any{"name": "query", "value": "team sync about the Q3 roadmap"}, map[string]any{"name": "max_results", "value": 10.0}}},
		"reasoning": "The user asked when the next roadmap sync is; search this week.", "context": map[string]any{"session": map[string]any{"id": "s-1"}}}
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("marshalJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if jsonappend.Marshal(p) == nil {
				b.Fatal("no bytes")
			}
		}
	})
}
