package pipeline

import (
	"context"
	"testing"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/internal/handlertest"

	"github.com/wardenhq/warden"
)

// fixedShadow answers v as a shadow set would, counting its calls and
// checking it sees the live outcome.
type fixedShadow struct {
	v     warden.Verdict
	calls int
	live  warden.Verdict
}

func (s *fixedShadow) Shadow(_ context.Context, _ *warden.Event, live *warden.Outcome) []warden.Result {
	s.calls++
	s.live = live.Verdict
	return []warden.Result{
		{Guardian: warden.GuardianShadow, PolicyID: "cand", Decision: s.v.String(), Mode: warden.ModeShadow},
		{Guardian: warden.GuardianShadow, Kind: warden.KindShadowSet, PolicyID: "cand", Decision: s.v.String(), Mode: warden.ModeShadow},
	}
}

// A shadow set's results are appended to the record, never to the outcome
// answered, and the live verdict stands; without a trace the shadow set is
// not asked.
func TestPipelineRecordsShadowResults(t *testing.T) {
	tests := []struct {
		name         string
		live, shadow warden.Verdict
		disagrees    bool
	}{
		{"live deny, shadow allow", warden.Deny, warden.Allow, true},
		{"live allow, shadow deny", warden.Allow, warden.Deny, true},
		{"both deny", warden.Deny, warden.Deny, false},
		{"live modify, shadow allow", warden.Modify, warden.Allow, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &memStore{}
			sh := &fixedShadow{v: tt.shadow}
			d := New(Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "policy", Handler: handlertest.Fixed(warden.Decision{Verdict: tt.live, PolicyID: "live"})}), Store: st, Shadow: sh})
			out, err := d.Decide(context.Background(), &warden.Event{Name: "steps/message", Payload: map[string]any{}})
			if err != nil || out.Verdict != tt.live {
				t.Fatalf("outcome %v, %v; want the live %v", out.Verdict, err, tt.live)
			}
			if len(out.Results) != 1 || out.Results[0].Mode == warden.ModeShadow {
				t.Fatalf("outcome results %+v: want the live result alone", out.Results)
			}
			if sh.calls != 1 || sh.live != tt.live {
				t.Fatalf("shadow called %d times with live %v", sh.calls, sh.live)
			}
			r := st.recs[0]
			if len(r.Results) != 3 || r.Results[0].PolicyID != "live" || r.Results[1].Mode != warden.ModeShadow {
				t.Fatalf("record results %+v", r.Results)
			}
			if r.Decision != tt.live.String() || r.ShadowDecision() != tt.shadow.String() || r.ShadowDisagrees() != tt.disagrees {
				t.Fatalf("record decision %s, shadow %s, disagrees %v", r.Decision, r.ShadowDecision(), r.ShadowDisagrees())
			}
			if got := (audit.Query{ShadowDisagrees: true}).Matcher()(r); got != tt.disagrees {
				t.Fatalf("Matcher(ShadowDisagrees) = %v", got)
			}
		})
	}
	t.Run("no trace", func(t *testing.T) {
		sh := &fixedShadow{v: warden.Allow}
		d := New(Options{Chain: warden.NewChain(warden.Deny), Shadow: sh})
		if out, _ := d.Decide(context.Background(), &warden.Event{Name: "x"}); out.Verdict != warden.Deny || sh.calls != 0 {
			t.Fatalf("verdict %v, shadow calls %d", out.Verdict, sh.calls)
		}
	})
}

func TestShadowSummary(t *testing.T) {
	sum := warden.Result{Guardian: warden.GuardianShadow, Kind: warden.KindShadowSet, Decision: "allow", Mode: warden.ModeShadow}
	tests := []struct {
		name     string
		decision string
		results  []warden.Result
		want     string
		disagree bool
	}{
		{"none", "deny", nil, "", false},
		{"live results only", "deny", []warden.Result{{Guardian: "policy", Decision: "deny", Mode: "enforce"}}, "", false},
		{"a per-policy shadow result is no summary", "deny", []warden.Result{{Guardian: warden.GuardianShadow, Decision: "allow", Mode: warden.ModeShadow}}, "", false},
		{"summary agrees", "allow", []warden.Result{sum}, "allow", false},
		{"summary disagrees", "deny", []warden.Result{{Guardian: "policy", Decision: "deny", Mode: "enforce"}, sum}, "allow", true},
		{"a summary kind outside shadow mode is none", "deny", []warden.Result{{Kind: warden.KindShadowSet, Decision: "allow", Mode: "enforce"}}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &audit.Record{Decision: tt.decision, Results: tt.results}
			if got := r.ShadowDecision(); got != tt.want {
				t.Errorf("ShadowDecision = %q, want %q", got, tt.want)
			}
			if got := r.ShadowDisagrees(); got != tt.disagree {
				t.Errorf("ShadowDisagrees = %v, want %v", got, tt.disagree)
			}
		})
	}
}
