package policy

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/wardenhq/warden"
)

// benchPolicies is a 12-policy set: five conditions on tool calls (names,
// arguments, agent, user), two globs, the rest for other events.
func benchPolicies() string {
	docs := []string{
		`id: no-rm
version: "1"
events: ["steps/toolCallRequest", "tool.pre_call"]
when: tool.name == "rm" || tool.name == "delete_database"
decision: deny
reasonExpr: '"tool " + tool.name + " is not allowed"'`,
		`id: external-email
version: "1"
events: ["steps/toolCallRequest"]
when: tool.name == "send_email" && has(tool.args.to) && !string(tool.args.to).endsWith("@company.io")
decision: ask
reason: external email needs approval`,
		`id: prod-agent-only
version: "1"
events: ["steps/toolCallRequest"]
when: agent.name == "prod-bot" && tool.server == "prod-db"
decision: deny`,
		`id: contractors
version: "1"
events: ["steps/toolCallRequest"]
when: user.organization == "contractor-inc" && tool.name.startsWith("admin_")
decision: deny`,
		`id: big-payload
version: "1"
events: ["steps/*"]
when: size(payload) > 50
decision: deny`,
		`id: mcp-servers
version: "1"
events: ["protocols/*"]
when: direction == "outbound" && tool.server in ["evil", "untrusted"]
decision: deny`,
		`id: answers
version: "1"
events: ["steps/message"]
when: message.role == "agent" && message.text.contains("CONFIDENTIAL")
decision: deny`,
		`id: memory
version: "1"
events: ["steps/memoryStore"]
when: text.size() > 100000
decision: deny`,
		`id: knowledge
version: "1"
events: ["steps/knowledgeRetrieval"]
when: text.contains("BEGIN PRIVATE")
decision: deny`,
		`id: a2a
version: "1"
events: ["message/send", "message/stream"]
when: direction == "outbound" && text.contains("password")
decision: deny`,
		`id: results
version: "1"
events: ["steps/toolCallResult"]
when: text.contains("rm -rf /")
decision: deny`,
		`id: trigger
version: "1"
events: ["steps/agentTrigger"]
when: user.id == ""
decision: deny`,
	}
	return strings.Join(docs, "\n---\n")
}

func benchEvent(tool string) *warden.Event {
	ev := toolCall(tool, map[string]any{"path": "/home/alice/report.txt", "mode": "read"})
	ev.Tool.Server = "files"
	return ev
}

func BenchmarkDecide(b *testing.B) {
	s := mustLoad(b, benchPolicies())
	if s.Len() != 12 {
		b.Fatalf("%d policies", s.Len())
	}
	e := NewEngine(s, Options{})
	ctx := context.Background()
	for _, bc := range []struct {
		name, tool string
		want       warden.Verdict
	}{
		{"nothing-matches", "read_file", warden.Abstain},
		{"one-denies", "rm", warden.Deny},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ev := benchEvent(bc.tool)
			if d, _ := e.Decide(ctx, ev); d.Verdict != bc.want {
				b.Fatalf("verdict %v, want %v", d.Verdict, bc.want)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				_, _ = e.Decide(ctx, ev)
			}
		})
	}
}

// BenchmarkDecideBuiltin measures the built-in pack on an ordinary tool call,
// detector time included (it runs secrets() and pii() over the text once each).
func BenchmarkDecideBuiltin(b *testing.B) {
	s, err := Builtin()
	if err != nil {
		b.Fatal(err)
	}
	e := NewEngine(s, Options{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		ev := benchEvent("read_file") // fresh: Event.Text is cached per event
		_, _ = e.Decide(ctx, ev)
	}
}

// BenchmarkCandidates shows the index cost does not grow with the number of
// policies for other events.
func BenchmarkCandidates(b *testing.B) {
	for _, n := range []int{10, 1000} {
		var docs []string
		for i := range n {
			docs = append(docs, fmt.Sprintf("id: p%d\nversion: \"1\"\nevents: [\"other/%d\", \"x/*\"]\ndecision: allow", i, i))
		}
		s := mustLoad(b, strings.Join(docs, "\n---\n"))
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = s.Candidates("steps/toolCallRequest")
			}
		})
	}
}

// BenchmarkDecideBenchPolicies measures bench/policies (what bench/compare.sh
// loads, --builtin=false) on the tool call of bench/requests/tool_call.json
// as the AOS parser normalizes it: a search_calendar call with its reasoning.
func BenchmarkDecideBenchPolicies(b *testing.B) {
	s, err := LoadSet(Spec{Paths: []string{"../bench/policies"}})
	if err != nil {
		b.Fatal(err)
	}
	e := NewEngine(s, Options{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		ev := toolCall("search_calendar", map[string]any{"query": "team sync about the Q3 roadmap",
			"from": "2025-01-27", "to": "2025-01-31", "max_results": 10.0})
		ev.Reasoning = "The user asked when the next roadmap sync is; search this week."
		ev.Agent = warden.Agent{ID: "1c88ab7d-395f-449a-af51-6028f9e842ea", Name: "Personal assistant",
			Version: "9889", Provider: "OpenAI"}
		ev.User = warden.User{ID: "u-4821", Name: "Dana", Organization: "org-acme"}
		if d, err := e.Decide(ctx, ev); err != nil || d.Verdict != warden.Abstain {
			b.Fatalf("Decide = %v, %v; want abstain (the audit policies only record)", d.Verdict, err)
		}
	}
}
