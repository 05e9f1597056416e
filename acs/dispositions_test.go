package acs

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/acsstate"
)

// TestDispositions: each of the five dispositions with its required
// fields, the §6.3 forms of modify, a deny at hooks that cannot be
// refused, and the chain that every content-bearing answer advances and
// that re-computes from the store.
func TestDispositions(t *testing.T) {
	f := newFixture(t, nil)
	s := f.session()
	s.hello()
	heads := map[string]bool{}
	step := func(method string, payload map[string]any, decision string) map[string]any {
		t.Helper()
		res := result(t, s.call(method, payload))
		if res["decision"] != decision {
			t.Fatalf("%s: decision %v, want %s: %v", method, res["decision"], decision, res)
		}
		if decision != "allow" && res["reasoning"] == nil {
			t.Errorf("%s: %s without reasoning", method, decision)
		}
		h, _ := res["chain_hash"].(string)
		if !hexHashRE.MatchString(h) || heads[h] {
			t.Fatalf("%s: chain_hash %q is not a new head", method, h)
		}
		heads[h] = true
		if res["signature"] == nil {
			t.Errorf("%s: the answer is not signed", method)
		}
		return res
	}
	step("steps/sessionStart", map[string]any{}, "allow")
	step("steps/toolCallRequest", toolCall("ls", map[string]any{"dir": "."}), "allow")
	deny := step("steps/toolCallRequest", toolCall("Bash", map[string]any{"command": "rm -rf ~"}), "deny")
	if refs, _ := deny["policy_references"].([]any); len(refs) != 1 || refs[0].(map[string]any)["policy_id"] != "acs-test-deny-rm" {
		t.Errorf("deny policy_references: %v", deny["policy_references"])
	}

	t.Run("modify: redactions", func(t *testing.T) {
		res := step("steps/userMessage", text("my card is 4111 1111 1111 1111, thanks"), "modify")
		m := res["modifications"].(map[string]any)
		rs, _ := m["redactions"].([]any)
		if len(rs) != 1 || m["modified_content"] != nil || m["parameter_overrides"] != nil {
			t.Fatalf("modifications %v", m)
		}
		r := rs[0].(map[string]any)
		if r["path"] != "/content/0/value" || strings.Contains(r["replacement"].(string), "4111") {
			t.Errorf("redaction %v", r)
		}
	})
	t.Run("modify: parameter_overrides", func(t *testing.T) {
		res := step("steps/toolCallRequest", toolCall("search", map[string]any{"q": "x", "limit": 5000}), "modify")
		m := res["modifications"].(map[string]any)
		if ov, _ := m["parameter_overrides"].(map[string]any); len(m) != 1 || ov["limit"] != float64(100) {
			t.Fatalf("modifications %v", m)
		}
	})
	t.Run("ask names its approval; approved, the identical step is allowed once", func(t *testing.T) {
		email := toolCall("send_email", map[string]any{"to": "x@example.com"})
		res := step("steps/toolCallRequest", email, "ask")
		d := res["ask_details"].(map[string]any)
		id, _ := d["approval_id"].(string)
		ap, _ := d["approver"].(map[string]any)
		if id == "" || ap["type"] != "human" || ap["endpoint"] != "http://warden.test/approvals/"+id {
			t.Fatalf("ask_details %v", d)
		}
		if _, err := f.g.Approvals().Resolve(context.Background(), id, true, warden.Principal{Name: "tester"}, "ok"); err != nil {
			t.Fatal(err)
		}
		res = step("steps/toolCallRequest", email, "allow")
		if codes, _ := res["reason_codes"].([]any); !slices.Contains(codes, any(warden.CodeApprovalGranted)) {
			t.Errorf("approved retry: %v", res)
		}
		step("steps/toolCallRequest", email, "ask") // once
	})
	t.Run("defer, bounded per session", func(t *testing.T) {
		for i := range acsstate.DefaultDeferMax {
			res := step("steps/toolCallRequest", toolCall("deploy", map[string]any{"n": i}), "defer")
			d := res["defer_details"].(map[string]any)
			if d["resolution_method"] == nil || d["resolution_timeout_ms"] != float64(60000) || d["timeout_decision"] != "deny" {
				t.Fatalf("defer_details %v", d)
			}
		}
		res := step("steps/toolCallRequest", toolCall("deploy", map[string]any{"n": 99}), "deny")
		if codes, _ := res["reason_codes"].([]any); codes[0] != ReasonDeferLimit {
			t.Errorf("past the bound: %v", res)
		}
	})
	t.Run("deny is not applicable where the step has happened", func(t *testing.T) {
		res := step("steps/postCompact", map[string]any{"summary": map[string]any{"value": "forbidden summary"},
			"entries_compacted": []any{"a"}, "pre_compact_chain_hash": strings.Repeat("0", 64)}, "allow")
		if codes, _ := res["reason_codes"].([]any); codes[0] != ReasonNotDecisionEligible {
			t.Errorf("postCompact: %v", res)
		}
		if data := res["policy_data"].(map[string]any)["warden"].(map[string]any); data["decided"] != "deny" {
			t.Errorf("the policies' deny is not named: %v", data)
		}
		step("steps/turnEnd", map[string]any{"turn_id": "t1", "outcome": "completed", "note": "forbidden"}, "allow")
	})
	t.Run("wrapped MCP", func(t *testing.T) {
		step("protocols/MCP/tools/call", map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call",
			"params": map[string]any{"name": "Bash", "arguments": map[string]any{"command": "rm -rf /"}}}, "deny")
		step("wrapped:mcp-2025-06-18/tools/call", map[string]any{"jsonrpc": "2.0", "id": 8, "method": "tools/call",
			"params": map[string]any{"name": "ls", "arguments": map[string]any{}}}, "allow")
	})
	step("agbom/snapshot", map[string]any{"components": []any{}}, "allow")
	step("steps/sessionEnd", map[string]any{"session_reason": "completed"}, "allow")

	es, err := f.store.ACSEntries(context.Background(), s.id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	head, err := VerifyEntries(es)
	sess, _ := f.store.ACSSession(context.Background(), s.id)
	if err != nil || head != sess.Head || int64(len(es)) != sess.Entries || len(es) != len(heads) {
		t.Fatalf("chain: %d entries, %d answers, head %s (session %s), %v", len(es), len(heads), head, sess.Head, err)
	}
	for _, e := range es {
		if !hexHashRE.MatchString(e.RequestHash) {
			t.Fatalf("entry without request_hash (ACS-Audit): %+v", e)
		}
	}
	// An edited entry no longer verifies.
	es[2].Decision = "allow"
	if _, err := VerifyEntries(es); err == nil {
		t.Error("an edited entry verified")
	}
}

// TestModifications: the §6.3 forms, disjoint targets.
func TestModifications(t *testing.T) {
	dec := func(s string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	cases := []struct {
		name, event, old, new, want string
	}{
		{"unchanged", "steps/userMessage", `{"a":"x"}`, `{"a":"x"}`, `null`},
		{"redaction", "steps/userMessage", `{"content":[{"type":"text","value":"k=s3cr3t"}]}`, `{"content":[{"type":"text","value":"k=[REDACTED]"}]}`,
			`{"redactions":[{"path":"/content/0/value","replacement":"k=[REDACTED]"}]}`},
		{"pointer escapes", "steps/memoryStore", `{"content":{"value":{"a/b~c":"x"}}}`, `{"content":{"value":{"a/b~c":"y"}}}`,
			`{"redactions":[{"path":"/content/value/a~1b~0c","replacement":"y"}]}`},
		{"override beside a redaction", "steps/toolCallRequest",
			`{"tool":{"name":"t"},"arguments":{"n":{"value":5},"s":{"value":"secret"}}}`,
			`{"tool":{"name":"t"},"arguments":{"n":{"value":1},"s":{"value":"[x]"}}}`,
			`{"parameter_overrides":{"n":1},"redactions":[{"path":"/arguments/s/value","replacement":"[x]"}]}`},
		{"an argument string inside an overridden value is not also redacted", "steps/toolCallRequest",
			`{"arguments":{"o":{"value":{"a":"x","b":1}}}}`, `{"arguments":{"o":{"value":{"a":"y","b":2}}}}`,
			`{"parameter_overrides":{"o":{"a":"y","b":2}}}`},
		{"a removed member is wholesale", "steps/userMessage", `{"a":"x","b":"y"}`, `{"a":"x"}`, `{"modified_content":"{\"a\":\"x\"}"}`},
		{"a removed argument is wholesale", "steps/toolCallRequest", `{"arguments":{"a":{"value":1}}}`, `{"arguments":{}}`, `{"modified_content":"{\"arguments\":{}}"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _ := json.Marshal(Modifications(c.event, dec(c.old), dec(c.new)))
			var a, b any
			json.Unmarshal(got, &a)
			json.Unmarshal([]byte(c.want), &b)
			ga, _ := json.Marshal(a)
			gb, _ := json.Marshal(b)
			if string(ga) != string(gb) {
				t.Errorf("got %s, want %s", ga, gb)
			}
		})
	}
}

// TestConcurrentSteps: 16 callers stepping one session at once; every step
// is answered and the chain is one line of all of them.
func TestConcurrentSteps(t *testing.T) {
	f := newFixture(t, nil)
	s := f.session()
	s.hello()
	const callers, each = 16, 10
	msgs := make([][]map[string]any, callers)
	for g := range msgs {
		for range each {
			msgs[g] = append(msgs[g], s.msg("steps/toolCallRequest", toolCall("ls", nil), nil))
		}
	}
	errs := make(chan error, callers*each)
	var wg sync.WaitGroup
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, m := range msgs[g] {
				b, _ := json.Marshal(m)
				var a map[string]any
				if err := json.Unmarshal(f.h.Handle(context.Background(), b, "http"), &a); err != nil || a["result"] == nil {
					errs <- fmt.Errorf("%v %v", err, a)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	es, _ := f.store.ACSEntries(context.Background(), s.id, 0, 0)
	if _, err := VerifyEntries(es); err != nil || len(es) != callers*each {
		t.Fatalf("%d entries, %v", len(es), err)
	}
}
