package warden_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/internal/handlertest"
)

// failing returns a handler that fails with err.
func failing(err error) warden.Handler {
	return warden.HandlerFunc(func(ctx context.Context, ev *warden.Event) (warden.Decision, error) { return warden.Decision{}, err })
}

func TestChainCompose(t *testing.T) {
	boom := errors.New("boom")
	slow := warden.HandlerFunc(func(ctx context.Context, ev *warden.Event) (warden.Decision, error) {
		select {
		case <-ctx.Done():
			return warden.Decision{}, ctx.Err()
		case <-time.After(5 * time.Second):
			return warden.Decision{Verdict: warden.Allow}, nil
		}
	})
	tests := []struct {
		name      string
		def       warden.Verdict
		steps     []warden.Step
		want      warden.Verdict
		wantCodes []string
		wantSeen  string // payload["seen"] for Modify
		wantID    string
		results   int
	}{
		{name: "no steps uses default allow", want: warden.Allow, wantCodes: []string{warden.CodeDefault}},
		{name: "abstain everywhere uses default deny", def: warden.Deny,
			steps: []warden.Step{{Name: "a", Handler: handlertest.Fixed(warden.Decision{})}}, want: warden.Deny, wantCodes: []string{warden.CodeDefault}, results: 1},
		{name: "allow is unanimous", def: warden.Deny, steps: []warden.Step{
			{Name: "a", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Allow, PolicyID: "p1"})},
			{Name: "b", Handler: handlertest.Fixed(warden.Decision{})},
		}, want: warden.Allow, wantID: "p1", results: 2},
		{name: "any deny wins and stops the chain", steps: []warden.Step{
			{Name: "a", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Modify, PolicyID: "m1"})},
			{Name: "b", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Deny, PolicyID: "d1", ReasonCodes: []string{"d1"}})},
			{Name: "c", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Deny, PolicyID: "d2"})},
		}, want: warden.Deny, wantCodes: []string{"d1"}, wantID: "d1", results: 2},
		{name: "ask is an outcome", steps: []warden.Step{
			{Name: "a", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Ask, PolicyID: "needs-approval", ReasonCodes: []string{"needs-approval"}})},
		}, want: warden.Ask, wantCodes: []string{"needs-approval"}, wantID: "needs-approval", results: 1},
		{name: "a deny after an ask wins", steps: []warden.Step{
			{Name: "a", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Ask, PolicyID: "needs-approval", ReasonCodes: []string{"needs-approval"}})},
			{Name: "b", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Deny, PolicyID: "d1", ReasonCodes: []string{"d1"}})},
		}, want: warden.Deny, wantCodes: []string{"d1"}, wantID: "d1", results: 2},
		{name: "defer outranks ask", steps: []warden.Step{
			{Name: "a", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Ask, PolicyID: "ask1", ReasonCodes: []string{"ask1"}})},
			{Name: "b", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Defer, PolicyID: "later", ReasonCodes: []string{"later"}})},
			{Name: "c", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Ask, PolicyID: "ask2", ReasonCodes: []string{"ask2"}})},
		}, want: warden.Defer, wantCodes: []string{"later"}, wantID: "later", results: 3},
		{name: "modifies apply in order each seeing the previous", steps: []warden.Step{
			{Name: "a", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Modify, PolicyID: "A", ReasonCodes: []string{"A"}})},
			{Name: "b", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Allow})},
			{Name: "c", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Modify, PolicyID: "B", ReasonCodes: []string{"B"}})},
		}, want: warden.Modify, wantSeen: "AB", wantCodes: []string{"A", "B"}, wantID: "A", results: 3},
		{name: "audit deny is recorded, never applied", steps: []warden.Step{
			{Name: "a", Mode: warden.Audit, Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Deny, PolicyID: "d"})},
			{Name: "b", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Allow})},
		}, want: warden.Allow, results: 2},
		{name: "audit modify is not applied", steps: []warden.Step{
			{Name: "a", Mode: warden.Audit, Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Modify, PolicyID: "m"})},
		}, want: warden.Allow, wantCodes: []string{warden.CodeDefault}, results: 1},
		{name: "error fails closed by default", steps: []warden.Step{
			{Name: "a", Handler: failing(boom)},
			{Name: "b", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Allow})},
		}, want: warden.Deny, wantCodes: []string{warden.CodeGuardianError}, results: 1},
		{name: "error with failure open is skipped", steps: []warden.Step{
			{Name: "a", Handler: failing(boom), Failure: warden.FailOpen},
			{Name: "b", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Allow, PolicyID: "ok"})},
		}, want: warden.Allow, wantID: "ok", results: 2},
		{name: "timeout is an error", steps: []warden.Step{
			{Name: "slow", Handler: slow, Timeout: 20 * time.Millisecond},
		}, want: warden.Deny, wantCodes: []string{warden.CodeGuardianError}, results: 1},
		{name: "panic is an error, not a crash", steps: []warden.Step{
			{Name: "p", Handler: warden.HandlerFunc(func(context.Context, *warden.Event) (warden.Decision, error) { panic("bad") })},
		}, want: warden.Deny, wantCodes: []string{warden.CodeGuardianError}, results: 1},
		{name: "modify without payload is an error", steps: []warden.Step{
			{Name: "m", Handler: warden.HandlerFunc(func(context.Context, *warden.Event) (warden.Decision, error) {
				return warden.Decision{Verdict: warden.Modify}, nil
			})},
		}, want: warden.Deny, wantCodes: []string{warden.CodeGuardianError}, results: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &warden.Event{Name: "steps/toolCallRequest", Payload: map[string]any{"x": 1.0}}
			out := warden.NewChain(tt.def, tt.steps...).Run(context.Background(), ev)
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
			if tt.want == warden.Modify {
				if out.Payload["seen"] != tt.wantSeen {
					t.Errorf("seen = %v, want %q", out.Payload["seen"], tt.wantSeen)
				}
			} else if out.Payload != nil {
				t.Errorf("payload on %v: %v", out.Verdict, out.Payload)
			}
			if _, ok := ev.Payload["seen"]; ok {
				t.Errorf("handler input was mutated: %v", ev.Payload)
			}
			if out.Verdict == warden.Deny && out.Reason == "" {
				t.Errorf("deny without a reason")
			}
		})
	}
}

func TestChainAuditResultsMarkedAudit(t *testing.T) {
	h := warden.HandlerFunc(func(context.Context, *warden.Event) (warden.Decision, error) {
		return warden.Decision{Verdict: warden.Deny, Results: []warden.Result{{Guardian: "policy", PolicyID: "p", Decision: "deny", Mode: "enforce"}}}, nil
	})
	out := warden.NewChain(warden.Allow, warden.Step{Name: "g", Handler: h, Mode: warden.Audit}).Run(context.Background(), &warden.Event{})
	if out.Verdict != warden.Allow || len(out.Results) != 1 || out.Results[0].Mode != "audit" {
		t.Fatalf("got %+v", out)
	}
}

func TestEventTextSkipsContextAndIsDeterministic(t *testing.T) {
	ev := &warden.Event{Payload: map[string]any{
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
	ev := &warden.Event{Name: "e", Payload: map[string]any{"name": "a"}}
	ev.BuildViews(func(e *warden.Event) { e.Tool.Name, _ = e.Payload["name"].(string) })
	n := ev.WithPayload(map[string]any{"name": "b"})
	if n.Tool.Name != "b" || n.Tool.Args == nil || ev.Payload["name"] != "a" {
		t.Fatalf("got %+v", n)
	}
}

func TestParseVerdict(t *testing.T) {
	for _, s := range []string{"allow", "deny", "modify", "ask"} {
		v, err := warden.ParseVerdict(s)
		if err != nil || v.String() != s {
			t.Errorf("ParseVerdict(%q) = %v, %v", s, v, err)
		}
	}
	for _, s := range []string{"", "Allow", "block"} {
		if _, err := warden.ParseVerdict(s); err == nil {
			t.Errorf("ParseVerdict(%q) succeeded", s)
		}
	}
}

func TestChainWhenAndGuard(t *testing.T) {
	onlyX := func(ctx context.Context, ev *warden.Event) (bool, error) { return ev.Tool.Name == "x", nil }
	badWhen := func(ctx context.Context, ev *warden.Event) (bool, error) { return false, errors.New("no such field") }
	refuse := func(ev *warden.Event, next map[string]any) error {
		if next["seen"] == "B" {
			return errors.New("escalation_refused: B may not")
		}
		return nil
	}
	tests := []struct {
		name    string
		steps   []warden.Step
		tool    string
		want    warden.Verdict
		results int
		refused int
		seen    string
	}{
		{name: "when false skips the step", tool: "y", want: warden.Allow, results: 0,
			steps: []warden.Step{{Name: "a", When: onlyX, Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Deny})}}},
		{name: "when true runs it", tool: "x", want: warden.Deny, results: 1,
			steps: []warden.Step{{Name: "a", When: onlyX, Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Deny})}}},
		{name: "when error fails closed", want: warden.Deny, results: 1,
			steps: []warden.Step{{Name: "a", When: badWhen, Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Allow})}}},
		{name: "when error fails open", want: warden.Allow, results: 2,
			steps: []warden.Step{{Name: "a", When: badWhen, Failure: warden.FailOpen, Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Deny})},
				{Name: "b", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Allow})}}},
		{name: "guard refuses one modify, the next applies", want: warden.Modify, results: 2, refused: 1, seen: "C",
			steps: []warden.Step{{Name: "b", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Modify, PolicyID: "B"})},
				{Name: "c", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Modify, PolicyID: "C"})}}},
		{name: "a refused modify alone leaves the default", want: warden.Allow, results: 1, refused: 1,
			steps: []warden.Step{{Name: "b", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Modify, PolicyID: "B"})}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &warden.Event{Payload: map[string]any{}, Tool: warden.Tool{Name: tt.tool}}
			out := warden.NewChain(warden.Allow, tt.steps...).WithGuard(refuse).Run(context.Background(), ev)
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
