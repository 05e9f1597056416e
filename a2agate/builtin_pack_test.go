package a2agate

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wardenhq/warden/pipeline"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/storetest"
)

// leakKey is the AWS documentation's example access key id: the secrets
// detector's aws_access_key.
const leakKey = "AKIAIOSFODNN7EXAMPLE"

// leakyAgent is an upstream A2A agent whose every answer carries leakKey:
// a message answers a message; "task" starts a task whose status messages
// and artifact carry the key (streamed, or kept for tasks/get).
type leakyAgent struct{}

func (leakyAgent) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	text := textOf(ec.Message)
	return func(yield func(a2a.Event, error) bool) {
		if !strings.HasPrefix(text, "task") {
			m := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("the key is "+leakKey))
			m.ContextID = ec.ContextID
			yield(m, nil)
			return
		}
		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, agentMsg(ec, "found "+leakKey)), nil) {
			return
		}
		if !yield(a2a.NewArtifactEvent(ec, a2a.NewTextPart("AWS_ACCESS_KEY_ID="+leakKey)), nil) {
			return
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, agentMsg(ec, "done: "+leakKey)), nil)
	}
}

func (leakyAgent) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// packGateway is warden's A2A proxy in front of a leakyAgent (served in
// the 1.0 binding, or the 0.3 one), deciding with the built-in pack alone.
func packGateway(t *testing.T, v03 bool) (url string, store *memStore) {
	t.Helper()
	h := a2asrv.NewHandler(leakyAgent{})
	var rpc http.Handler = a2asrv.NewJSONRPCHandler(h)
	if v03 {
		rpc = a2av0.NewJSONRPCHandler(h)
	}
	up := httptest.NewServer(rpc)
	t.Cleanup(up.Close)
	set, err := policy.LoadSet(policy.Spec{Builtin: true})
	if err != nil {
		t.Fatal(err)
	}
	store = storetest.NewMem()
	dec := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "policy", Handler: policy.NewEngine(set, policy.Options{})}), Views: catalog.Views, Store: store})
	mux := http.NewServeMux()
	mux.Handle("/a2a/", New(dec, map[string]warden.Upstream{"leaky": {Name: "leaky", URL: up.URL}}, Options{}))
	gw := httptest.NewServer(mux)
	t.Cleanup(gw.Close)
	return gw.URL + "/a2a/leaky", store
}

// noKey fails when what the client got still carries the key.
func noKey(t *testing.T, what string, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	if strings.Contains(string(b), leakKey) {
		t.Fatalf("%s reached the client with the key: %s", what, b)
	}
	if !strings.Contains(string(b), "[REDACTED:aws_access_key]") {
		t.Fatalf("%s: no redaction marker: %s", what, b)
	}
}

// TestBuiltinPackRedactsInbound: with the built-in pack alone, a secret an
// A2A agent answers with — in a message, a streamed status update or
// artifact update, a task's status message, history or artifacts read
// with tasks/get — reaches the client redacted, as the same secret in an
// MCP tool result does (redact-secrets-in-tool-results).
func TestBuiltinPackRedactsInbound(t *testing.T) {
	t.Run("a2a-go v2 client (1.0)", func(t *testing.T) {
		url, store := packGateway(t, false)
		c := client10(t, url)
		ctx := context.Background()
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: userMsg("who are you")})
		if err != nil {
			t.Fatal(err)
		}
		noKey(t, "a message answer", res)
		var taskID a2a.TaskID
		n := 0
		for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: userMsg("task one")}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			switch e := ev.(type) {
			case *a2a.Task:
				taskID = e.ID
			case *a2a.TaskStatusUpdateEvent:
				noKey(t, "a streamed status update", e)
			case *a2a.TaskArtifactUpdateEvent:
				noKey(t, "a streamed artifact update", e)
			}
		}
		if n != 4 || taskID == "" {
			t.Fatalf("%d events, task %q", n, taskID)
		}
		task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: taskID})
		if err != nil {
			t.Fatal(err)
		}
		noKey(t, "tasks/get", task)
		mods := 0
		for _, r := range store.Records() {
			if r.Direction == warden.Inbound && r.Decision == "modify" {
				if r.PolicyID != "redact-secrets-inbound-a2a" {
					t.Fatalf("inbound modify by %s", r.PolicyID)
				}
				mods++
			}
		}
		if mods < 5 { // the message, three stream events, the task
			t.Fatalf("%d inbound modifies", mods)
		}
	})
	t.Run("raw 0.3 stream and tasks/get", func(t *testing.T) {
		url, _ := packGateway(t, true)
		evs := sseEvents(t, url, `{"jsonrpc":"2.0","id":"s","method":"message/stream","params":{"message":{"kind":"message","role":"user","messageId":"m1","contextId":"c1","parts":[{"kind":"text","text":"task two"}]}}}`)
		if len(evs) != 4 {
			t.Fatalf("events %v", evs)
		}
		var id string
		for i, e := range evs {
			if e["error"] != nil {
				t.Fatalf("event %d: %v", i, e)
			}
			if i == 0 {
				id = getStr(getObj(e, "result"), "id")
				continue
			}
			noKey(t, "stream event "+getStr(getObj(e, "result"), "kind"), e)
		}
		r := rpc(t, url, `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"`+id+`"}}`)
		if r["error"] != nil {
			t.Fatalf("tasks/get: %v", r)
		}
		noKey(t, "tasks/get", r)
	})
}
