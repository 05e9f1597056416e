package warden

import (
	"context"
	"testing"
)

// fixedShadow answers v as a shadow set would, counting its calls and
// checking it sees the live outcome.
type fixedShadow struct {
	v     Verdict
	calls int
	live  Verdict
}

func (s *fixedShadow) Shadow(_ context.Context, _ *Event, live *Outcome) []Result {
	s.calls++
	s.live = live.Verdict
	return []Result{
		{Guardian: GuardianShadow, PolicyID: "cand", Decision: s.v.String(), Mode: ModeShadow},
		{Guardian: GuardianShadow, Kind: KindShadowSet, PolicyID: "cand", Decision: s.v.String(), Mode: ModeShadow},
	}
}

// A shadow set's results are appended to the record, never to the outcome
// answered, and the live verdict stands; without a trace the shadow set is
// not asked.
func TestDeciderRecordsShadowResults(t *testing.T) {
	tests := []struct {
		name         string
		live, shadow Verdict
		disagrees    bool
	}{
		{"live deny, shadow allow", Deny, Allow, true},
		{"live allow, shadow deny", Allow, Deny, true},
		{"both deny", Deny, Deny, false},
		{"live modify, shadow allow", Modify, Allow, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &memStore{}
			sh := &fixedShadow{v: tt.shadow}
			d := NewDecider(NewChain(Allow, Step{Name: "policy", Handler: fixed(Decision{Verdict: tt.live, PolicyID: "live"})}), nil, st, nil)
			d.SetShadow(sh)
			out, err := d.Decide(context.Background(), &Event{Name: "steps/message", Payload: map[string]any{}})
			if err != nil || out.Verdict != tt.live {
				t.Fatalf("outcome %v, %v; want the live %v", out.Verdict, err, tt.live)
			}
			if len(out.Results) != 1 || out.Results[0].Mode == ModeShadow {
				t.Fatalf("outcome results %+v: want the live result alone", out.Results)
			}
			if sh.calls != 1 || sh.live != tt.live {
				t.Fatalf("shadow called %d times with live %v", sh.calls, sh.live)
			}
			r := st.recs[0]
			if len(r.Results) != 3 || r.Results[0].PolicyID != "live" || r.Results[1].Mode != ModeShadow {
				t.Fatalf("record results %+v", r.Results)
			}
			if r.Decision != tt.live.String() || r.ShadowDecision() != tt.shadow.String() || r.ShadowDisagrees() != tt.disagrees {
				t.Fatalf("record decision %s, shadow %s, disagrees %v", r.Decision, r.ShadowDecision(), r.ShadowDisagrees())
			}
			if got := (Query{ShadowDisagrees: true}).Matcher()(r); got != tt.disagrees {
				t.Fatalf("Matcher(ShadowDisagrees) = %v", got)
			}
		})
	}
	t.Run("no trace", func(t *testing.T) {
		sh := &fixedShadow{v: Allow}
		d := NewDecider(NewChain(Deny), nil, nil, nil)
		d.SetShadow(sh)
		if out, _ := d.Decide(context.Background(), &Event{Name: "x"}); out.Verdict != Deny || sh.calls != 0 {
			t.Fatalf("verdict %v, shadow calls %d", out.Verdict, sh.calls)
		}
	})
}

func TestShadowSummary(t *testing.T) {
	sum := Result{Guardian: GuardianShadow, Kind: KindShadowSet, Decision: "allow", Mode: ModeShadow}
	tests := []struct {
		name     string
		decision string
		results  []Result
		want     string
		disagree bool
	}{
		{"none", "deny", nil, "", false},
		{"live results only", "deny", []Result{{Guardian: "policy", Decision: "deny", Mode: "enforce"}}, "", false},
		{"a per-policy shadow result is no summary", "deny", []Result{{Guardian: GuardianShadow, Decision: "allow", Mode: ModeShadow}}, "", false},
		{"summary agrees", "allow", []Result{sum}, "allow", false},
		{"summary disagrees", "deny", []Result{{Guardian: "policy", Decision: "deny", Mode: "enforce"}, sum}, "allow", true},
		{"a summary kind outside shadow mode is none", "deny", []Result{{Kind: KindShadowSet, Decision: "allow", Mode: "enforce"}}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Record{Decision: tt.decision, Results: tt.results}
			if got := r.ShadowDecision(); got != tt.want {
				t.Errorf("ShadowDecision = %q, want %q", got, tt.want)
			}
			if got := r.ShadowDisagrees(); got != tt.disagree {
				t.Errorf("ShadowDisagrees = %v, want %v", got, tt.disagree)
			}
		})
	}
}
