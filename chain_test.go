package warden

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"
)

// fixed returns a handler answering d; with key set, a Modify decision adds
// key=<value> to a copy of the payload it sees, so ordering is observable.
func fixed(d Decision) Handler {
	return HandlerFunc(func(ctx context.Context, ev *Event) (Decision, error) {
		if d.Verdict == Modify {
			p := map[string]any{}
			for k, v := range ev.Payload {
				p[k] = v
			}
			seen, _ := p["seen"].(string)
			p["seen"] = seen + d.PolicyID
			d.Payload = p
		}
		return d, nil
	})
}

func failing(err error) Handler {
	return HandlerFunc(func(ctx context.Context, ev *Event) (Decision, error) { return Decision{}, err })
}

func TestChainCompose(t *testing.T) {
	boom := errors.New("boom")
	slow := HandlerFunc(func(ctx context.Context, ev *Event) (Decision, error) {
		select {
		case <-ctx.Done():
			return Decision{}, ctx.Err()
		case <-time.After(5 * time.Second):
			return Decision{Verdict: Allow}, nil
		}
	})
	tests := []struct {
		name      string
		def       Verdict
		steps     []Step
		want      Verdict
		wantCodes []string
		wantSeen  string // payload["seen"] for Modify
		wantID    string
		results   int
	}{
		{name: "no steps uses default allow", want: Allow, wantCodes: []string{CodeDefault}},
		{name: "abstain everywhere uses default deny", def: Deny,
			steps: []Step{{Name: "a", Handler: fixed(Decision{})}}, want: Deny, wantCodes: []string{CodeDefault}, results: 1},
		{name: "allow is unanimous", def: Deny, steps: []Step{
			{Name: "a", Handler: fixed(Decision{Verdict: Allow, PolicyID: "p1"})},
			{Name: "b", Handler: fixed(Decision{})},
		}, want: Allow, wantID: "p1", results: 2},
		{name: "any deny wins and stops the chain", steps: []Step{
			{Name: "a", Handler: fixed(Decision{Verdict: Modify, PolicyID: "m1"})},
			{Name: "b", Handler: fixed(Decision{Verdict: Deny, PolicyID: "d1", ReasonCodes: []string{"d1"}})},
			{Name: "c", Handler: fixed(Decision{Verdict: Deny, PolicyID: "d2"})},
		}, want: Deny, wantCodes: []string{"d1"}, wantID: "d1", results: 2},
		{name: "ask is an outcome", steps: []Step{
			{Name: "a", Handler: fixed(Decision{Verdict: Ask, PolicyID: "needs-approval", ReasonCodes: []string{"needs-approval"}})},
		}, want: Ask, wantCodes: []string{"needs-approval"}, wantID: "needs-approval", results: 1},
		{name: "a deny after an ask wins", steps: []Step{
			{Name: "a", Handler: fixed(Decision{Verdict: Ask, PolicyID: "needs-approval", ReasonCodes: []string{"needs-approval"}})},
			{Name: "b", Handler: fixed(Decision{Verdict: Deny, PolicyID: "d1", ReasonCodes: []string{"d1"}})},
		}, want: Deny, wantCodes: []string{"d1"}, wantID: "d1", results: 2},
		{name: "defer outranks ask", steps: []Step{
			{Name: "a", Handler: fixed(Decision{Verdict: Ask, PolicyID: "ask1", ReasonCodes: []string{"ask1"}})},
			{Name: "b", Handler: fixed(Decision{Verdict: Defer, PolicyID: "later", ReasonCodes: []string{"later"}})},
			{Name: "c", Handler: fixed(Decision{Verdict: Ask, PolicyID: "ask2", ReasonCodes: []string{"ask2"}})},
		}, want: Defer, wantCodes: []string{"later"}, wantID: "later", results: 3},
		{name: "modifies apply in order each seeing the previous", steps: []Step{
			{Name: "a", Handler: fixed(Decision{Verdict: Modify, PolicyID: "A", ReasonCodes: []string{"A"}})},
			{Name: "b", Handler: fixed(Decision{Verdict: Allow})},
			{Name: "c", Handler: fixed(Decision{Verdict: Modify, PolicyID: "B", ReasonCodes: []string{"B"}})},
		}, want: Modify, wantSeen: "AB", wantCodes: []string{"A", "B"}, wantID: "A", results: 3},
		{name: "audit deny is recorded, never applied", steps: []Step{
			{Name: "a", Mode: Audit, Handler: fixed(Decision{Verdict: Deny, PolicyID: "d"})},
			{Name: "b", Handler: fixed(Decision{Verdict: Allow})},
		}, want: Allow, results: 2},
		{name: "audit modify is not applied", steps: []Step{
			{Name: "a", Mode: Audit, Handler: fixed(Decision{Verdict: Modify, PolicyID: "m"})},
		}, want: Allow, wantCodes: []string{CodeDefault}, results: 1},
		{name: "error fails closed by default", steps: []Step{
			{Name: "a", Handler: failing(boom)},
			{Name: "b", Handler: fixed(Decision{Verdict: Allow})},
		}, want: Deny, wantCodes: []string{CodeGuardianError}, results: 1},
		{name: "error with failure open is skipped", steps: []Step{
			{Name: "a", Handler: failing(boom), Failure: FailOpen},
			{Name: "b", Handler: fixed(Decision{Verdict: Allow, PolicyID: "ok"})},
		}, want: Allow, wantID: "ok", results: 2},
		{name: "timeout is an error", steps: []Step{
			{Name: "slow", Handler: slow, Timeout: 20 * time.Millisecond},
		}, want: Deny, wantCodes: []string{CodeGuardianError}, results: 1},
		{name: "panic is an error, not a crash", steps: []Step{
			{Name: "p", Handler: HandlerFunc(func(context.Context, *Event) (Decision, error) { panic("bad") })},
		}, want: Deny, wantCodes: []string{CodeGuardianError}, results: 1},
		{name: "modify without payload is an error", steps: []Step{
			{Name: "m", Handler: HandlerFunc(func(context.Context, *Event) (Decision, error) {
				return Decision{Verdict: Modify}, nil
			})},
		}, want: Deny, wantCodes: []string{CodeGuardianError}, results: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &Event{Name: "steps/toolCallRequest", Payload: map[string]any{"x": 1.0}}
			out := NewChain(tt.def, tt.steps...).Run(context.Background(), ev)
			if out.Verdict != tt.want {
				t.Fatalf("verdict = %v, want %v (%+v)", out.Verdict, tt.want, out)
			}
			if tt.wantCodes != nil && !reflect.DeepEqual(out.ReasonCodes, tt.wantCodes) {
				t.Errorf("reason codes = %v, want %v", out.ReasonCodes, tt.wantCodes)
			}
			if tt.wantID != "" && out.PolicyID != tt.wantID {
				t.Errorf("policy id = %q, want %q", out.PolicyID, tt.wantID)
			}
			if got := len(out.Results); got != tt.results {
				t.Errorf("results = %d, want %d: %+v", got, tt.results, out.Results)
			}
			if tt.want == Modify {
				if out.Payload["seen"] != tt.wantSeen {
					t.Errorf("seen = %v, want %q", out.Payload["seen"], tt.wantSeen)
				}
			} else if out.Payload != nil {
				t.Errorf("payload on %v: %v", out.Verdict, out.Payload)
			}
			if _, ok := ev.Payload["seen"]; ok {
				t.Errorf("handler input was mutated: %v", ev.Payload)
			}
			if out.Verdict == Deny && out.Reason == "" {
				t.Errorf("deny without a reason")
			}
		})
	}
}

func TestChainAuditResultsMarkedAudit(t *testing.T) {
	h := HandlerFunc(func(context.Context, *Event) (Decision, error) {
		return Decision{Verdict: Deny, Results: []Result{{Guardian: "policy", PolicyID: "p", Decision: "deny", Mode: "enforce"}}}, nil
	})
	out := NewChain(Allow, Step{Name: "g", Handler: h, Mode: Audit}).Run(context.Background(), &Event{})
	if out.Verdict != Allow || len(out.Results) != 1 || out.Results[0].Mode != "audit" {
		t.Fatalf("got %+v", out)
	}
}

func TestEventTextSkipsContextAndIsDeterministic(t *testing.T) {
	ev := &Event{Payload: map[string]any{
		"context": map[string]any{"user": map[string]any{"email": "u@x.io"}},
		"b":       []any{"two", map[string]any{"z": "four", "y": "three"}},
		"a":       "one",
		"n":       1.0,
	}}
	if got, want := ev.Text(), "one\ntwo\nthree\nfour"; got != want {
		t.Fatalf("Text() = %q, want %q", got, want)
	}
}

func TestWithPayloadRebuildsViews(t *testing.T) {
	ev := &Event{Name: "e", Payload: map[string]any{"name": "a"}}
	ev.BuildViews(func(e *Event) { e.Tool.Name, _ = e.Payload["name"].(string) })
	n := ev.WithPayload(map[string]any{"name": "b"})
	if n.Tool.Name != "b" || n.Tool.Args == nil || ev.Payload["name"] != "a" {
		t.Fatalf("got %+v", n)
	}
}

func TestParseVerdict(t *testing.T) {
	for _, s := range []string{"allow", "deny", "modify", "ask"} {
		v, err := ParseVerdict(s)
		if err != nil || v.String() != s {
			t.Errorf("ParseVerdict(%q) = %v, %v", s, v, err)
		}
	}
	for _, s := range []string{"", "Allow", "block"} {
		if _, err := ParseVerdict(s); err == nil {
			t.Errorf("ParseVerdict(%q) succeeded", s)
		}
	}
}

func TestChainWhenAndGuard(t *testing.T) {
	onlyX := func(ctx context.Context, ev *Event) (bool, error) { return ev.Tool.Name == "x", nil }
	badWhen := func(ctx context.Context, ev *Event) (bool, error) { return false, errors.New("no such field") }
	refuse := func(ev *Event, next map[string]any) error {
		if next["seen"] == "B" {
			return errors.New("escalation_refused: B may not")
		}
		return nil
	}
	tests := []struct {
		name    string
		steps   []Step
		tool    string
		want    Verdict
		results int
		refused int
		seen    string
	}{
		{name: "when false skips the step", tool: "y", want: Allow, results: 0,
			steps: []Step{{Name: "a", When: onlyX, Handler: fixed(Decision{Verdict: Deny})}}},
		{name: "when true runs it", tool: "x", want: Deny, results: 1,
			steps: []Step{{Name: "a", When: onlyX, Handler: fixed(Decision{Verdict: Deny})}}},
		{name: "when error fails closed", want: Deny, results: 1,
			steps: []Step{{Name: "a", When: badWhen, Handler: fixed(Decision{Verdict: Allow})}}},
		{name: "when error fails open", want: Allow, results: 2,
			steps: []Step{{Name: "a", When: badWhen, Failure: FailOpen, Handler: fixed(Decision{Verdict: Deny})},
				{Name: "b", Handler: fixed(Decision{Verdict: Allow})}}},
		{name: "guard refuses one modify, the next applies", want: Modify, results: 2, refused: 1, seen: "C",
			steps: []Step{{Name: "b", Handler: fixed(Decision{Verdict: Modify, PolicyID: "B"})},
				{Name: "c", Handler: fixed(Decision{Verdict: Modify, PolicyID: "C"})}}},
		{name: "a refused modify alone leaves the default", want: Allow, results: 1, refused: 1,
			steps: []Step{{Name: "b", Handler: fixed(Decision{Verdict: Modify, PolicyID: "B"})}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &Event{Payload: map[string]any{}, Tool: Tool{Name: tt.tool}}
			out := NewChain(Allow, tt.steps...).WithGuard(refuse).Run(context.Background(), ev)
			if out.Verdict != tt.want || len(out.Results) != tt.results {
				t.Fatalf("got %v with %d results, want %v with %d: %+v", out.Verdict, len(out.Results), tt.want, tt.results, out.Results)
			}
			n := 0
			for _, r := range out.Results {
				if r.Refused != "" {
					n++
				}
			}
			if n != tt.refused {
				t.Errorf("refused results = %d, want %d", n, tt.refused)
			}
			if tt.seen != "" && out.Payload["seen"] != tt.seen {
				t.Errorf("payload %v, want seen=%s", out.Payload, tt.seen)
			}
		})
	}
}
