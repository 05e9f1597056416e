package policy

import (
	"context"
	"slices"
	"testing"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
)

// coverPolicies: the natural ask on one MCP tool (both directions), one
// that chose the inbound direction, and one that asks about everything
// carrying "wire".
const coverPolicies = `
id: ask-echo
version: "1"
events: ["protocols/MCP"]
when: 'tool.name == "echo"'
decision: ask
reason: echo needs approval
---
id: ask-echo-answers
version: "1"
events: ["protocols/MCP"]
when: 'tool.name == "echo" && direction == "inbound" && text.contains("secret plan")'
decision: ask
reason: an answer naming the plan needs its own approval
---
id: ask-wire
version: "1"
events: ["protocols/MCP"]
when: 'text.contains("wire")'
decision: ask
reason: wires need approval
---
id: audit-echo
version: "1"
events: ["protocols/MCP"]
when: 'tool.name == "echo"'
decision: ask
mode: audit
`

// echoAnswer is the inbound answer to a tools/call of echo, carrying text,
// with its views built as the Decider builds them.
func echoAnswer(text string, approved ...warden.Cover) *warden.Event {
	ev := &warden.Event{
		Name: "protocols/MCP", Surface: warden.SurfaceMCP, Direction: warden.Inbound,
		Payload: map[string]any{"jsonrpc": "2.0", "id": 1.0, "result": map[string]any{
			"content": []any{map[string]any{"type": "text", "text": text}}}},
		Envelope: warden.Envelope{Server: "everything", Approved: approved,
			Answers: &warden.Tool{Name: "echo", Server: "everything", Args: map[string]any{"message": text}}},
	}
	ev.BuildViews(catalog.Views)
	return ev
}

// An approved ask covers the answer to the call it approved: the policy
// that asked does not ask again unless it chose the direction; every other
// policy still decides the answer.
func TestApprovalCoversTheAnswer(t *testing.T) {
	e := NewEngine(mustLoad(t, coverPolicies), Options{})
	echo := warden.Cover{Guardian: "policy", PolicyID: "ask-echo"}
	cases := []struct {
		name    string
		ev      *warden.Event
		want    warden.Verdict
		policy  string
		covered bool // the reason codes name approval_covered
	}{
		{"not approved: asks again", echoAnswer("hello"), warden.Ask, "ask-echo", false},
		{"approved: covered", echoAnswer("hello", echo), warden.Allow, "ask-echo", true},
		{"another guardian's approval does not cover", echoAnswer("hello", warden.Cover{Guardian: "other", PolicyID: "ask-echo"}), warden.Ask, "ask-echo", false},
		{"another policy's approval does not cover", echoAnswer("hello", warden.Cover{Guardian: "policy", PolicyID: "ask-wire"}), warden.Ask, "ask-echo", false},
		{"a policy that chose inbound asks again", echoAnswer("the secret plan", echo), warden.Ask, "ask-echo-answers", false},
		{"another policy matching the answer still asks", echoAnswer("wire 10k", echo), warden.Ask, "ask-wire", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := e.Decide(context.Background(), tc.ev)
			if err != nil {
				t.Fatal(err)
			}
			if d.Verdict != tc.want || d.PolicyID != tc.policy {
				t.Fatalf("got %s by %q (%s), want %s by %q", d.Verdict, d.PolicyID, d.Reason, tc.want, tc.policy)
			}
			if got := slices.Contains(d.ReasonCodes, warden.CodeApprovalCovered); got != tc.covered {
				t.Fatalf("reason codes %v: approval_covered %v, want %v", d.ReasonCodes, got, tc.covered)
			}
			for _, r := range d.Results {
				if r.PolicyID == "audit-echo" && r.Decision != warden.Ask.String() {
					t.Fatalf("an audit policy's result changed: %+v", r)
				}
				if r.PolicyID == "ask-echo" && len(tc.ev.Envelope.Approved) > 0 && tc.ev.Envelope.Approved[0] == echo &&
					r.Decision != warden.Allow.String() {
					t.Fatalf("the covered policy's result: %+v, want allow", r)
				}
			}
		})
	}
}

// readsIdent finds the direction variable wherever the condition reads it,
// and not in a string or a field of that name.
func TestReadsDirection(t *testing.T) {
	for src, want := range map[string]bool{
		`direction == "inbound"`:                    true,
		`tool.name == "x" && direction != ""`:       true,
		`[1].exists(x, direction == "outbound")`:    true,
		`tool.name == "direction"`:                  false,
		`payload.direction == "inbound"`:            false,
		`"direction" in payload`:                    false,
		`has(payload.params) && event == "x"`:       false,
		`text.contains("direction == \"inbound\"")`: false,
	} {
		p, msgs := compile(src, nil)
		if p == nil {
			t.Fatalf("%s: %v", src, msgs)
		}
		if p.direction != want {
			t.Errorf("%s: reads direction %v, want %v", src, p.direction, want)
		}
	}
}
