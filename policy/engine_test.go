package policy

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/wardenhq/warden"
)

func decide(t *testing.T, s *Set, opts Options, ev *warden.Event) warden.Decision {
	t.Helper()
	d, err := NewEngine(s, opts).Decide(context.Background(), ev)
	if err != nil {
		t.Fatalf("Decide: %v", err)
	}
	return d
}

func resultSummary(rs []warden.Result) string {
	var parts []string
	for _, r := range rs {
		s := r.PolicyID + "=" + r.Decision + "/" + r.Mode
		if r.Error != "" {
			s += "!"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

const combo = `
id: allow-read
version: "1"
events: ["steps/toolCallRequest"]
when: tool.name == "read_file"
decision: allow
reason: reading is fine
---
id: deny-rm-late
version: "1"
events: ["steps/*"]
when: tool.name == "rm"
decision: deny
reason: second deny
priority: 5
---
id: deny-rm
version: "7"
events: ["steps/toolCallRequest"]
when: tool.name == "rm"
decision: deny
reasonExpr: '"no " + tool.name'
---
id: audit-rm
version: "1"
events: ["steps/toolCallRequest"]
when: tool.name == "rm" || tool.name == "ask_me"
decision: deny
mode: audit
reason: would deny
priority: -10
---
id: ask-me
version: "1"
events: ["steps/toolCallRequest"]
when: tool.name == "ask_me"
decision: ask
reason: needs a human
---
id: audit-modify
version: "1"
events: ["steps/toolCallRequest"]
when: tool.name == "edit"
decision: modify
mode: audit
modify:
  - set: {path: /audit, value: 'true'}
---
id: mod-second
version: "1"
events: ["steps/toolCallRequest"]
when: tool.name == "edit"
decision: modify
priority: 2
reason: second
modify:
  - set: {path: /trail/-, value: '"second saw " + string(size(payload.trail))'}
---
id: mod-first
version: "1"
events: ["steps/toolCallRequest"]
when: tool.name == "edit"
decision: modify
priority: 1
reason: first
modify:
  - set: {path: /trail, value: '["first"]'}
---
id: mod-noop
version: "1"
events: ["steps/toolCallRequest"]
when: tool.name == "edit"
decision: modify
priority: 3
modify:
  - redact: [credit_card]
`

func TestCombining(t *testing.T) {
	s := mustLoad(t, combo)
	tests := []struct {
		name, tool  string
		verdict     warden.Verdict
		policy, rsn string
		codes       []string
		results     string
	}{
		{"deny wins, every deny recorded", "rm", warden.Deny, "deny-rm", "no rm",
			[]string{"deny-rm", "deny-rm-late"}, "audit-rm=deny/audit deny-rm=deny/enforce deny-rm-late=deny/enforce"},
		{"ask", "ask_me", warden.Ask, "ask-me", "needs a human",
			[]string{"ask-me"}, "audit-rm=deny/audit ask-me=ask/enforce"},
		{"allow", "read_file", warden.Allow, "allow-read", "reading is fine",
			[]string{"allow-read"}, "allow-read=allow/enforce"},
		{"abstain", "other", warden.Abstain, "", "", nil, ""},
		{"modifies in order, audit not applied, noop is allow", "edit", warden.Modify, "mod-first", "first; second",
			[]string{"mod-first", "mod-second"},
			"audit-modify=modify/audit mod-first=modify/enforce mod-second=modify/enforce mod-noop=allow/enforce"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev := toolCall(tc.tool, nil)
			orig, _ := json.Marshal(ev.Payload)
			d := decide(t, s, Options{}, ev)
			if d.Verdict != tc.verdict || d.PolicyID != tc.policy || d.Reason != tc.rsn ||
				!reflect.DeepEqual(d.ReasonCodes, tc.codes) {
				t.Errorf("decision = %v %q %q %v, want %v %q %q %v", d.Verdict, d.PolicyID, d.Reason,
					d.ReasonCodes, tc.verdict, tc.policy, tc.rsn, tc.codes)
			}
			if got := resultSummary(d.Results); got != tc.results {
				t.Errorf("results = %s\nwant      %s", got, tc.results)
			}
			for _, r := range d.Results {
				if r.Guardian != "policy" || r.PolicyVersion == "" {
					t.Errorf("result %+v", r)
				}
			}
			if after, _ := json.Marshal(ev.Payload); string(after) != string(orig) {
				t.Errorf("event payload mutated: %s", after)
			}
			if tc.verdict == warden.Modify {
				if got := d.Payload["trail"]; !reflect.DeepEqual(got, []any{"first", "second saw 1"}) {
					t.Errorf("trail = %v", got)
				}
				if _, ok := d.Payload["audit"]; ok {
					t.Error("audit modify applied")
				}
				if d.Results[3].Reason != "nothing to modify" {
					t.Errorf("noop reason = %q", d.Results[3].Reason)
				}
			} else if d.Payload != nil {
				t.Errorf("payload on %v", d.Verdict)
			}
		})
	}
}

const failing = `
id: broken
version: "1"
events: ["steps/toolCallRequest"]
when: payload.nope == "x"
decision: allow
---
id: ok-allow
version: "1"
events: ["steps/toolCallRequest"]
decision: allow
reason: fine
priority: 1
---
id: broken-audit
version: "1"
events: ["steps/toolCallRequest"]
when: payload.nope == "x"
decision: deny
mode: audit
---
id: broken-set
version: "1"
events: ["steps/message"]
decision: modify
modify:
  - set: {path: /missing/child, value: '"x"'}
`

func TestRuntimeErrors(t *testing.T) {
	s := mustLoad(t, failing)
	tests := []struct {
		name    string
		failure warden.FailurePolicy
		ev      *warden.Event
		verdict warden.Verdict
		policy  string
		reason  string
		results string
	}{
		{"when closed", warden.FailClosed, toolCall("x", nil), warden.Deny, "broken",
			`policy broken: evaluation error: no such key: nope`,
			"broken=deny/enforce! broken-audit=deny/audit! ok-allow=allow/enforce"},
		{"when open", warden.FailOpen, toolCall("x", nil), warden.Allow, "ok-allow", "fine",
			"broken=allow/enforce! broken-audit=allow/audit! ok-allow=allow/enforce"},
		{"modify closed", warden.FailClosed, message("user", "hi"), warden.Deny, "broken-set",
			`policy broken-set: evaluation error: modify[0]: path /missing: no member "missing"`,
			"broken-set=deny/enforce!"},
		{"modify open", warden.FailOpen, message("user", "hi"), warden.Abstain, "", "",
			"broken-set=allow/enforce!"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := decide(t, s, Options{Failure: tc.failure}, tc.ev)
			if d.Verdict != tc.verdict || d.PolicyID != tc.policy || d.Reason != tc.reason {
				t.Errorf("decision = %v %q %q, want %v %q %q", d.Verdict, d.PolicyID, d.Reason,
					tc.verdict, tc.policy, tc.reason)
			}
			if got := resultSummary(d.Results); got != tc.results {
				t.Errorf("results = %s\nwant      %s", got, tc.results)
			}
			if d.Results[0].Error == "" {
				t.Error("no error recorded")
			}
		})
	}
}

func TestEventIndex(t *testing.T) {
	s := mustLoad(t, `
id: g-steps
version: "1"
events: ["steps/*", "steps/toolCallRequest"]
decision: allow
priority: 1
---
id: exact
version: "1"
events: ["steps/toolCallRequest"]
decision: allow
---
id: g-mcp
version: "1"
events: ["protocols/MC?"]
decision: allow
---
id: late-exact
version: "1"
events: ["steps/toolCallRequest", "x"]
decision: allow
priority: 2
`)
	tests := []struct{ event, want string }{
		{"steps/toolCallRequest", "exact,g-steps,late-exact"},
		{"steps/message", "g-steps"},
		{"protocols/MCP", "g-mcp"},
		{"protocols/MCPX", ""},
		{"x", "late-exact"},
		{"nothing", ""},
	}
	for _, tc := range tests {
		t.Run(tc.event, func(t *testing.T) {
			for range 2 { // second time from the cache
				var ids []string
				for _, p := range s.Candidates(tc.event) {
					ids = append(ids, p.ID)
				}
				if got := strings.Join(ids, ","); got != tc.want {
					t.Errorf("Candidates(%s) = %s, want %s", tc.event, got, tc.want)
				}
			}
		})
	}
}

func TestSwapAndGuardianName(t *testing.T) {
	e := NewEngine(nil, Options{Name: "corp"})
	ev := toolCall("x", nil)
	if d, _ := e.Decide(context.Background(), ev); d.Verdict != warden.Abstain {
		t.Fatalf("empty engine: %v", d.Verdict)
	}
	e.Swap(mustLoad(t, "id: a\nversion: \"1\"\nevents: [\"*\"]\ndecision: deny\n"))
	d, _ := e.Decide(context.Background(), ev)
	if d.Verdict != warden.Deny || d.Results[0].Guardian != "corp" || d.Reason != "policy a: deny" {
		t.Fatalf("after swap: %+v", d)
	}
	if e.Set().Len() != 1 {
		t.Fatal("Set()")
	}
}

func TestInChain(t *testing.T) {
	s := mustLoad(t, combo)
	c := warden.NewChain(warden.Allow, warden.Step{Name: "policy", Handler: NewEngine(s, Options{})})
	out := c.Run(context.Background(), toolCall("ask_me", nil))
	if out.Verdict != warden.Ask || out.ReasonCodes[0] != "ask-me" {
		t.Errorf("ask in chain: %+v", out)
	}
	if d := out.WithoutHold(); d.Verdict != warden.Deny || d.ReasonCodes[0] != warden.CodeApprovalRequired || d.ReasonCodes[1] != "ask-me" {
		t.Errorf("ask without a hold: %+v", d)
	}
	out = c.Run(context.Background(), toolCall("other", nil))
	if out.Verdict != warden.Allow || out.ReasonCodes[0] != warden.CodeDefault {
		t.Errorf("abstain in chain: %+v", out)
	}
}
