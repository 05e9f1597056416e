package a2agate

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/internal/sealid"
)

var fleetKey = bytes.Repeat([]byte{0x3c}, sealid.KeySize)

func fleetSealer(t testing.TB, key []byte) *sealid.Sealer {
	t.Helper()
	s, err := sealid.New([][]byte{key}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// roundRobin sends each request to the next replica (no session affinity).
type roundRobin struct {
	mu    sync.Mutex
	next  int
	hosts []string
	hits  map[string]int
}

func (rr *roundRobin) RoundTrip(r *http.Request) (*http.Response, error) {
	rr.mu.Lock()
	h := rr.hosts[rr.next%len(rr.hosts)]
	rr.next++
	rr.hits[h]++
	rr.mu.Unlock()
	r = r.Clone(r.Context())
	u, _ := url.Parse(h)
	r.URL.Host, r.Host = u.Host, u.Host
	r.Header.Set("X-Tenant", "acme")
	r.Header.Set("X-Caller", "ci")
	return http.DefaultTransport.RoundTrip(r)
}

// TestTasksAcrossReplicas: two proxies sharing the task key and nothing
// else, one upstream agent, and an a2a-go v2 client whose requests
// alternate between them: every call on a task reaches the upstream with
// the upstream's own id, the client sees one id for its task everywhere,
// and both traces record the task's calls under its context.
func TestTasksAcrossReplicas(t *testing.T) {
	up := newUpstream(t, false, nil)
	a := newGateway(t, map[string]string{"echo": up.URL}, Options{Tasks: fleetSealer(t, fleetKey)})
	b := newGateway(t, map[string]string{"echo": up.URL}, Options{Tasks: fleetSealer(t, fleetKey)})
	rr := &roundRobin{hosts: []string{a.URL, b.URL}, hits: map[string]int{}}
	ctx := context.Background()
	c, err := a2aclient.NewFromEndpoints(ctx, []*a2a.AgentInterface{a2a.NewAgentInterface(a.URL+"/a2a/echo", a2a.TransportProtocolJSONRPC)},
		a2aclient.WithJSONRPCTransport(&http.Client{Transport: rr}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: userMsg("task wait"), Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("not a task: %#v", res)
	}
	upID, err := fleetSealer(t, fleetKey).OpenStableStrings(sealid.Binding{Kind: TaskKind, Server: "echo", Tenant: "acme", Caller: "ci"}, string(task.ID), 2)
	if err != nil || upID[0] == string(task.ID) || upID[1] != task.ContextID {
		t.Fatalf("the client's task id %q opens to %q, %v: want the upstream's id and the context", task.ID, upID, err)
	}
	for i := range 4 {
		got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
		if err != nil || got.ID != task.ID || got.ContextID != task.ContextID {
			t.Fatalf("get %d: %v %v", i, got, err)
		}
		if got.Status.Message != nil && got.Status.Message.TaskID != "" && got.Status.Message.TaskID != task.ID {
			t.Fatalf("get %d: the status message names task %q, want %q", i, got.Status.Message.TaskID, task.ID)
		}
	}
	cfg, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, URL: "https://hooks.example/cb"})
	if err != nil || cfg.TaskID != task.ID {
		t.Fatalf("push set: %v %v", cfg, err)
	}
	back, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: cfg.ID})
	if err != nil || back.URL != "https://hooks.example/cb" || back.TaskID != task.ID {
		t.Fatalf("push get: %v %v", back, err)
	}
	canceled, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
	if err != nil || canceled.Status.State != a2a.TaskStateCanceled || canceled.ID != task.ID {
		t.Fatalf("cancel: %v %v", canceled, err)
	}
	if rr.hits[a.URL] < 3 || rr.hits[b.URL] < 3 {
		t.Fatalf("hits %v: the requests did not alternate", rr.hits)
	}
	for name, g := range map[string]*gateway{"A": a, "B": b} {
		n := 0
		for _, ev := range []string{MethodGet, MethodCancel, MethodPushSet, MethodPushGet} {
			for _, r := range append(find(g.store.Records(), ev, warden.Outbound), find(g.store.Records(), ev, warden.Inbound)...) {
				n++
				if r.SessionID != task.ContextID {
					t.Errorf("replica %s: %s %s recorded under session %q, want the task's context %q", name, r.Direction, ev, r.SessionID, task.ContextID)
				}
				if strings.Contains(string(r.Input), string(task.ID)) {
					t.Errorf("replica %s: the trace holds the sealed id, not the upstream's", name)
				}
			}
		}
		if n < 4 {
			t.Errorf("replica %s recorded %d task calls", name, n)
		}
	}
	// A stream: every event names the task by one id, which the other
	// replica serves.
	var streamID a2a.TaskID
	n := 0
	for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: userMsg("task now")}) {
		if err != nil {
			t.Fatal(err)
		}
		var id a2a.TaskID
		switch e := ev.(type) {
		case *a2a.Task:
			id = e.ID
		case *a2a.TaskStatusUpdateEvent:
			id = e.TaskID
		case *a2a.TaskArtifactUpdateEvent:
			id = e.TaskID
		default:
			t.Fatalf("event %T", ev)
		}
		if streamID == "" {
			streamID = id
		}
		if id != streamID {
			t.Fatalf("stream event %d names task %q, the first %q: a task must keep one id", n, id, streamID)
		}
		n++
	}
	if n < 3 || streamID == "" {
		t.Fatalf("%d stream events", n)
	}
	if got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: streamID}); err != nil || got.ID != streamID || got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("get the streamed task: %v %v", got, err)
	}
}

// TestTaskIDRefused: a task id that does not open is "task not found"
// (-32001) and never reaches the upstream.
func TestTaskIDRefused(t *testing.T) {
	up := newUpstream(t, false, nil)
	agents := map[string]string{"echo": up.URL, "other": up.URL}
	a := newGateway(t, agents, Options{Tasks: fleetSealer(t, fleetKey)})
	b := newGateway(t, agents, Options{Tasks: fleetSealer(t, fleetKey)})
	foreign := newGateway(t, agents, Options{Tasks: fleetSealer(t, bytes.Repeat([]byte{9}, sealid.KeySize))})
	caller := []string{"X-Tenant", "acme", "X-Caller", "ci"}
	send := rpc(t, a.URL+"/a2a/echo", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"task wait"}]},"configuration":{"returnImmediately":true}}}`, caller...)
	id := getStr(getObj(getObj(send, "result"), "task"), "id")
	if id == "" {
		t.Fatalf("send: %v", send)
	}
	get := func(base, agent, tid string, hdr ...string) map[string]any {
		return rpc(t, base+"/a2a/"+agent, `{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"`+tid+`"}}`, hdr...)
	}
	if r := get(b.URL, "echo", id, caller...); getStr(getObj(r, "result"), "id") != id {
		t.Fatalf("the other replica: %v", r)
	}
	upID, _ := fleetSealer(t, fleetKey).OpenStableStrings(sealid.Binding{Kind: TaskKind, Server: "echo", Tenant: "acme", Caller: "ci"}, id, 2)
	raw, _ := base64.RawURLEncoding.DecodeString(id)
	flip := func(i int) string {
		c := bytes.Clone(raw)
		c[i] ^= 0x01
		return base64.RawURLEncoding.EncodeToString(c)
	}
	mcpID, _ := fleetSealer(t, fleetKey).SealStrings(sealid.Binding{Kind: "mcp-session", Server: "echo", Tenant: "acme", Caller: "ci"}, upID[0], upID[1])
	cases := []struct {
		name, base, agent, id string
		hdr                   []string
	}{
		{"bit flipped", b.URL, "echo", flip(len(raw) / 2), caller},
		{"tag bit flipped", b.URL, "echo", flip(len(raw) - 1), caller},
		{"truncated", b.URL, "echo", id[:len(id)-3], caller},
		{"the upstream's own id", b.URL, "echo", upID[0], caller},
		{"other key", foreign.URL, "echo", id, caller},
		{"other agent", b.URL, "other", id, caller},
		{"other tenant", b.URL, "echo", id, []string{"X-Tenant", "globex", "X-Caller", "ci"}},
		{"other caller", b.URL, "echo", id, []string{"X-Tenant", "acme", "X-Caller", "eve"}},
		{"an MCP session id", b.URL, "echo", mcpID, caller},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(up.methods())
			r := get(c.base, c.agent, c.id, c.hdr...)
			if errCode(r) != CodeTaskNotFound || !strings.Contains(errMsg(r), "task not found") {
				t.Fatalf("got %v; want -32001 task not found", r)
			}
			if n := len(up.methods()); n != before {
				t.Fatalf("a refused id reached the upstream (%d calls, was %d)", n, before)
			}
		})
	}
}

// FuzzOpenRequestTasks: whatever params a client sends, opening its task
// ids never panics, and a params that opened names only upstream ids the
// key sealed.
func FuzzOpenRequestTasks(f *testing.F) {
	s := fleetSealer(f, fleetKey)
	g := &Gate{tasks: s}
	b := sealid.Binding{Kind: TaskKind, Server: "echo"}
	good := s.SealStableStrings(b, "up-1", "ctx-1")
	f.Add("GetTask", `{"id":"`+good+`"}`)
	f.Add("tasks/get", `{"id":"nope"}`)
	f.Add("SendMessage", `{"message":{"taskId":"`+good+`","referenceTaskIds":["`+good+`",1,null]}}`)
	f.Add("CreateTaskPushNotificationConfig", `{"taskId":"`+good+`","id":"cfg"}`)
	f.Add("tasks/pushNotificationConfig/get", `{"id":"`+good+`","pushNotificationConfigId":"x"}`)
	f.Fuzz(func(t *testing.T, wire, params string) {
		m, ok := methods[wire]
		if !ok {
			return
		}
		var p map[string]any
		if json.Unmarshal([]byte(params), &p) != nil {
			return
		}
		ctxID, _, err := g.openRequestTasks(b, m, p)
		if err != nil {
			return
		}
		if ctxID != "" && ctxID != "ctx-1" {
			t.Fatalf("opened a context %q the key never sealed", ctxID)
		}
	})
}
