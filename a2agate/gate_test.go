package a2agate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/internal/sealid"
)

func client10(t *testing.T, url string) *a2aclient.Client {
	t.Helper()
	c, err := a2aclient.NewFromEndpoints(context.Background(), []*a2a.AgentInterface{a2a.NewAgentInterface(url, a2a.TransportProtocolJSONRPC)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func userMsg(text string) *a2a.Message {
	return a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
}

// TestSend: message/send through the proxy, with the a2a-go v2 client (A2A
// 1.0, SendMessage) and with raw 0.3 requests (message/send): allowed,
// denied before the upstream (which sees nothing), modified on the way out,
// and denied on the way back.
func TestSend(t *testing.T) {
	cases := []struct {
		name, text string
		wantReply  string // "" when denied
		wantDeny   string
		upstream   string // what the agent receives; "" for nothing
	}{
		{"allowed", "hello", "echo: hello", "", "hello"},
		{"denied outbound", "here are the launch codes", "", "denied by warden: launch codes stay home", ""},
		{"modified outbound", "mail bob@example.com", "echo: mail [REDACTED:email]", "", "mail [REDACTED:email]"},
		{"denied inbound", "classified plans", "", "denied by warden: classified answer", "classified plans"},
		{"modified inbound", "whois", "reach me at [REDACTED:email]", "", "whois"},
	}
	t.Run("a2a-go v2 client (1.0)", func(t *testing.T) {
		up := newUpstream(t, false, nil)
		gw := newGateway(t, map[string]string{"echo": up.URL}, Options{})
		c := client10(t, gw.URL+"/a2a/echo")
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				before := len(up.agent.received())
				res, err := c.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: userMsg(tc.text)})
				if tc.wantDeny != "" {
					if err == nil || !strings.Contains(err.Error(), tc.wantDeny) {
						t.Fatalf("want %q, got %v, %v", tc.wantDeny, res, err)
					}
				} else {
					if err != nil {
						t.Fatal(err)
					}
					m, ok := res.(*a2a.Message)
					if !ok || textOf(m) != tc.wantReply {
						t.Fatalf("reply %#v, want %q", res, tc.wantReply)
					}
				}
				got := up.agent.received()[before:]
				if tc.upstream == "" && len(got) != 0 || tc.upstream != "" && !slices.Equal(got, []string{tc.upstream}) {
					t.Fatalf("upstream received %q, want %q", got, tc.upstream)
				}
			})
		}
	})
	t.Run("raw 0.3", func(t *testing.T) {
		up := newUpstream(t, true, nil)
		gw := newGateway(t, map[string]string{"echo": up.URL}, Options{})
		for i, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				before := len(up.agent.received())
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m%d","parts":[{"kind":"text","text":%q}]}}}`, 100+i, i, tc.text)
				resp := rpc(t, gw.URL+"/a2a/echo/", body)
				if resp["id"] != float64(100+i) {
					t.Fatalf("id %v", resp["id"])
				}
				if tc.wantDeny != "" {
					if errCode(resp) != CodeDenied || errMsg(resp) != tc.wantDeny {
						t.Fatalf("want CodeDenied %q, got %v", tc.wantDeny, resp)
					}
					data, _ := resp["error"].(map[string]any)["data"].(map[string]any)
					if data["decision"] != "deny" || data["policyId"] == "" || data["recordId"] == "" {
						t.Fatalf("0.3 error data: %v", resp["error"])
					}
				} else {
					r, _ := resp["result"].(map[string]any)
					if r["kind"] != "message" || catalog.PartsText(getArr(r, "parts")) != tc.wantReply {
						t.Fatalf("reply %v, want %q", resp, tc.wantReply)
					}
				}
				got := up.agent.received()[before:]
				if tc.upstream == "" && len(got) != 0 || tc.upstream != "" && !slices.Equal(got, []string{tc.upstream}) {
					t.Fatalf("upstream received %q, want %q", got, tc.upstream)
				}
			})
		}
	})
}

// TestDenyErrorShape: a 1.0 request is denied with error.data as a list of
// typed details (what a2a-go v2 decodes), a 0.3 one with an object; both
// carry the reason and the trace record id.
func TestDenyErrorShape(t *testing.T) {
	up := newUpstream(t, false, nil)
	gw := newGateway(t, map[string]string{"echo": up.URL}, Options{})
	resp := rpc(t, gw.URL+"/a2a/echo", `{"jsonrpc":"2.0","id":"a","method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"the launch codes"}]}}}`, "A2A-Version", "1.0")
	e := resp["error"].(map[string]any)
	details, ok := e["data"].([]any)
	if errCode(resp) != CodeDenied || !ok || len(details) != 1 {
		t.Fatalf("%v", resp)
	}
	d := details[0].(map[string]any)
	md := d["metadata"].(map[string]any)
	if d["@type"] != errorInfoType || d["reason"] != "DENIED_BY_WARDEN" || md["policyId"] != "no-launch-codes" ||
		md["reason"] == "" || md["recordId"] == "" || md["decision"] != "deny" {
		t.Fatalf("detail %v", d)
	}
	// 0.3: the same members in an object.
	resp = rpc(t, gw.URL+"/a2a/echo", `{"jsonrpc":"2.0","id":"b","method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m2","parts":[{"kind":"text","text":"the launch codes"}]}}}`)
	e = resp["error"].(map[string]any)
	data, ok := e["data"].(map[string]any)
	if errCode(resp) != CodeDenied || !ok || data["name"] != "DENIED_BY_WARDEN" || data["policyId"] != "no-launch-codes" ||
		data["reason"] == "" || data["recordId"] == "" || e["message"] != "denied by warden: "+data["reason"].(string) {
		t.Fatalf("0.3 deny %v", resp)
	}
	if len(up.methods()) != 0 {
		t.Fatalf("upstream was called: %v", up.methods())
	}
}

// TestStream: streamed events are each decided; one denied mid-stream ends
// the stream with a CodeDenied error event, the later events never reach the
// client, and the upstream stream is closed.
func TestStream(t *testing.T) {
	t.Run("a2a-go v2 client (1.0), denied mid-stream", func(t *testing.T) {
		up := newUpstream(t, false, nil)
		gw := newGateway(t, map[string]string{"echo": up.URL}, Options{})
		c := client10(t, gw.URL+"/a2a/echo")
		var texts []string
		var streamErr error
		for ev, err := range c.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{Message: userMsg("stream forbidden")}) {
			if err != nil {
				streamErr = err
				break
			}
			switch e := ev.(type) {
			case *a2a.Task:
				texts = append(texts, "task")
			case *a2a.TaskStatusUpdateEvent:
				texts = append(texts, textOf(e.Status.Message))
			}
		}
		if streamErr == nil || !strings.Contains(streamErr.Error(), "denied by warden: forbidden content in the stream") {
			t.Fatalf("stream error %v", streamErr)
		}
		if !slices.Equal(texts, []string{"task", "step one"}) {
			t.Fatalf("relayed %q", texts)
		}
		up.waitStreamsClosed(t)
		recs := gw.store.Records()
		in := find(recs, MethodStream, warden.Inbound)
		if len(in) != 3 || in[2].Decision != "deny" || in[2].PolicyID != "no-forbidden-stream" {
			t.Fatalf("inbound records %+v", in)
		}
		for _, r := range in {
			if r.SessionID == "" || r.SessionID != in[0].SessionID || r.Surface != warden.SurfaceA2A {
				t.Fatalf("record %+v", r)
			}
		}
	})
	t.Run("raw 0.3", func(t *testing.T) {
		up := newUpstream(t, true, nil)
		gw := newGateway(t, map[string]string{"echo": up.URL}, Options{})
		body := `{"jsonrpc":"2.0","id":7,"method":"message/stream","params":{"message":{"kind":"message","role":"user","messageId":"s1","contextId":"ctx-stream","parts":[{"kind":"text","text":"stream forbidden"}]}}}`
		evs := sseEvents(t, gw.URL+"/a2a/echo", body)
		if len(evs) != 3 {
			t.Fatalf("events %v", evs)
		}
		if r := evs[0]["result"].(map[string]any); r["kind"] != "task" || r["contextId"] != "ctx-stream" {
			t.Fatalf("first %v", evs[0])
		}
		if v := resultView(evs[1]["result"].(map[string]any)); v.Text != "step one" {
			t.Fatalf("second %v", evs[1])
		}
		if errCode(evs[2]) != CodeDenied || evs[2]["id"] != float64(7) {
			t.Fatalf("last %v", evs[2])
		}
		up.waitStreamsClosed(t)
		for _, r := range gw.store.Records() {
			if r.SessionID != "ctx-stream" {
				t.Fatalf("session %q in %+v", r.SessionID, r)
			}
		}
	})
	t.Run("modified stream event", func(t *testing.T) {
		up := newUpstream(t, true, nil)
		gw := newGateway(t, map[string]string{"echo": up.URL}, Options{})
		evs := sseEvents(t, gw.URL+"/a2a/echo", `{"jsonrpc":"2.0","id":"s","method":"message/stream","params":{"message":{"kind":"message","role":"user","messageId":"w","parts":[{"kind":"text","text":"stream whois"}]}}}`)
		var texts []string
		for _, e := range evs {
			if e["id"] != "s" || e["error"] != nil || e["context"] != nil {
				t.Fatalf("event %v", e)
			}
			texts = append(texts, resultView(e["result"].(map[string]any)).Text)
		}
		if !slices.Equal(texts, []string{"", "mail [REDACTED:email]", "done"}) {
			t.Fatalf("relayed %q", texts)
		}
	})
	t.Run("allowed stream relays every event", func(t *testing.T) {
		up := newUpstream(t, false, nil)
		gw := newGateway(t, map[string]string{"echo": up.URL}, Options{})
		c := client10(t, gw.URL+"/a2a/echo")
		n := 0
		var last a2a.Event
		for ev, err := range c.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{Message: userMsg("task quick")}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			last = ev
		}
		st, ok := last.(*a2a.TaskStatusUpdateEvent)
		if n != 4 || !ok || st.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("%d events, last %#v", n, last)
		}
		if in := find(gw.store.Records(), MethodStream, warden.Inbound); len(in) != n {
			t.Fatalf("%d inbound records for %d events", len(in), n)
		}
	})
}

// TestResubscribe: SubscribeToTask (tasks/resubscribe) is a stream whose
// events are inbound tasks/resubscribe events.
func TestResubscribe(t *testing.T) {
	up := newUpstream(t, false, nil)
	gw := newGateway(t, map[string]string{"echo": up.URL}, Options{})
	c := client10(t, gw.URL+"/a2a/echo")
	ctx := context.Background()
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: userMsg("task wait"), Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	done := make(chan []a2a.TaskState, 1)
	go func() {
		var states []a2a.TaskState
		for ev, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
			if err != nil {
				break
			}
			switch e := ev.(type) {
			case *a2a.Task:
				states = append(states, e.Status.State)
			case *a2a.TaskStatusUpdateEvent:
				states = append(states, e.Status.State)
			}
		}
		done <- states
	}()
	deadline := time.Now().Add(3 * time.Second)
	for len(find(gw.store.Records(), MethodResubscribe, warden.Inbound)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no resubscribe event relayed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID}); err != nil {
		t.Fatal(err)
	}
	select {
	case states := <-done:
		if len(states) == 0 || states[len(states)-1] != a2a.TaskStateCanceled {
			t.Fatalf("states %v", states)
		}
	case <-time.After(4 * time.Second):
		t.Fatal("the resubscribed stream did not end")
	}
	for _, r := range find(gw.store.Records(), MethodResubscribe, warden.Inbound) {
		if r.SessionID != task.ContextID {
			t.Fatalf("session %q, want %q", r.SessionID, task.ContextID)
		}
	}
}

// TestTasks: get, cancel and push config set/get, in both dialects, are the
// same events, recorded under the task's context id.
func TestTasks(t *testing.T) {
	t.Run("a2a-go v2 client (1.0)", func(t *testing.T) {
		up := newUpstream(t, false, nil)
		gw := newGateway(t, map[string]string{"echo": up.URL}, Options{})
		c := client10(t, gw.URL+"/a2a/echo")
		ctx := context.Background()
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: userMsg("task wait"), Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
		if err != nil {
			t.Fatal(err)
		}
		task, ok := res.(*a2a.Task)
		if !ok {
			t.Fatalf("not a task: %#v", res)
		}
		got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
		if err != nil || got.ID != task.ID {
			t.Fatalf("get: %v %v", got, err)
		}
		cfg, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, URL: "https://hooks.example/cb"})
		if err != nil {
			t.Fatal(err)
		}
		back, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: cfg.ID})
		if err != nil || back.URL != "https://hooks.example/cb" {
			t.Fatalf("push get: %v %v", back, err)
		}
		if _, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, URL: "https://evil.example/steal"}); err == nil || !strings.Contains(err.Error(), "denied by warden: push to evil.example") {
			t.Fatalf("evil push: %v", err)
		}
		canceled, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
		if err != nil || canceled.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("cancel: %v %v", canceled, err)
		}
		checkTaskRecords(t, gw.store.Records(), task.ContextID)
		if slices.Contains(up.methods(), "") {
			t.Fatalf("upstream methods %v", up.methods())
		}
	})
	t.Run("raw 0.3", func(t *testing.T) {
		up := newUpstream(t, true, nil)
		gw := newGateway(t, map[string]string{"echo": up.URL}, Options{})
		url := gw.URL + "/a2a/echo"
		resp := rpc(t, url, `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"configuration":{"blocking":false},"message":{"kind":"message","role":"user","messageId":"t1","parts":[{"kind":"text","text":"task wait"}]}}}`)
		task, _ := resp["result"].(map[string]any)
		id, ctxID := getStr(task, "id"), getStr(task, "contextId")
		if getStr(task, "kind") != "task" || id == "" || ctxID == "" {
			t.Fatalf("send: %v", resp)
		}
		if r := rpc(t, url, `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"`+id+`"}}`); getStr(getObj(r, "result"), "id") != id {
			t.Fatalf("get: %v", r)
		}
		r := rpc(t, url, `{"jsonrpc":"2.0","id":3,"method":"tasks/pushNotificationConfig/set","params":{"taskId":"`+id+`","pushNotificationConfig":{"url":"https://hooks.example/cb"}}}`)
		cfgID := getStr(getObj(getObj(r, "result"), "pushNotificationConfig"), "id")
		if cfgID == "" {
			t.Fatalf("push set: %v", r)
		}
		r = rpc(t, url, `{"jsonrpc":"2.0","id":4,"method":"tasks/pushNotificationConfig/get","params":{"id":"`+id+`","pushNotificationConfigId":"`+cfgID+`"}}`)
		if getStr(getObj(getObj(r, "result"), "pushNotificationConfig"), "url") != "https://hooks.example/cb" {
			t.Fatalf("push get: %v", r)
		}
		calls := len(up.methods())
		r = rpc(t, url, `{"jsonrpc":"2.0","id":5,"method":"tasks/pushNotificationConfig/set","params":{"taskId":"`+id+`","pushNotificationConfig":{"url":"https://evil.example/steal"}}}`)
		if errCode(r) != CodeDenied || len(up.methods()) != calls {
			t.Fatalf("evil push: %v (upstream calls %d -> %d)", r, calls, len(up.methods()))
		}
		r = rpc(t, url, `{"jsonrpc":"2.0","id":6,"method":"tasks/cancel","params":{"id":"`+id+`"}}`)
		if getStr(getObj(getObj(r, "result"), "status"), "state") != "canceled" {
			t.Fatalf("cancel: %v", r)
		}
		checkTaskRecords(t, gw.store.Records(), ctxID)
	})
}

// checkTaskRecords: both directions of tasks/get, tasks/cancel and the push
// config calls are recorded on surface a2a under the task's context id.
func checkTaskRecords(t *testing.T, recs []audit.Record, ctxID string) {
	t.Helper()
	for _, ev := range []string{MethodGet, MethodCancel, MethodPushSet, MethodPushGet} {
		for _, dir := range []string{warden.Outbound, warden.Inbound} {
			rs := find(recs, ev, dir)
			if len(rs) == 0 {
				t.Errorf("no %s %s record", dir, ev)
			}
			for _, r := range rs {
				if r.Surface != warden.SurfaceA2A || r.SessionID != ctxID {
					t.Errorf("%s %s: surface %q session %q, want a2a %q", dir, ev, r.Surface, r.SessionID, ctxID)
				}
			}
		}
	}
	denied := find(recs, MethodPushSet, warden.Outbound)
	if len(denied) != 2 || denied[1].Decision != "deny" || denied[1].PolicyID != "no-evil-push" {
		t.Errorf("push set records %+v", denied)
	}
}

// TestMethodNames: the 0.3 and 1.0 names of a method are one event.
func TestMethodNames(t *testing.T) {
	for _, tc := range []struct{ v03, v10 string }{
		{"message/send", "SendMessage"},
		{"message/stream", "SendStreamingMessage"},
		{"tasks/get", "GetTask"},
		{"tasks/cancel", "CancelTask"},
		{"tasks/resubscribe", "SubscribeToTask"},
		{"tasks/resubscribe", "TaskResubscription"},
		{"tasks/pushNotificationConfig/get", "GetTaskPushNotificationConfig"},
		{"tasks/pushNotificationConfig/set", "CreateTaskPushNotificationConfig"},
		{"tasks/pushNotificationConfig/set", "SetTaskPushNotificationConfig"},
		{"tasks/pushNotificationConfig/list", "ListTaskPushNotificationConfigs"},
		{"tasks/pushNotificationConfig/delete", "DeleteTaskPushNotificationConfig"},
		{"agent/getAuthenticatedExtendedCard", "GetExtendedAgentCard"},
	} {
		a, ok1 := EventName(tc.v03)
		b, ok2 := EventName(tc.v10)
		if !ok1 || !ok2 || a != tc.v03 || b != tc.v03 {
			t.Errorf("%s -> %q, %s -> %q; want both %q", tc.v03, a, tc.v10, b, tc.v03)
		}
	}
	if _, ok := EventName("tools/call"); ok {
		t.Error("tools/call is not an A2A method")
	}

	// On the wire: one message in each dialect, the same event recorded.
	up := newUpstream(t, false, nil)
	ts, _ := sealid.New(nil, 0)
	gw := newGateway(t, map[string]string{"echo": up.URL}, Options{Tasks: ts})
	nope := ts.SealStableStrings(sealid.Binding{Kind: TaskKind, Server: "echo"}, "nope", "") // a task id the proxy handed out
	rpc(t, gw.URL+"/a2a/echo", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"`+nope+`"}}`)
	rpc(t, gw.URL+"/a2a/echo", `{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"`+nope+`"}}`)
	out := find(gw.store.Records(), MethodGet, warden.Outbound)
	if len(out) != 2 || out[0].SessionID != "nope" || out[1].SessionID != "nope" {
		t.Fatalf("records %+v", out)
	}
	if m := up.methods(); !slices.Equal(m, []string{"tasks/get", "GetTask"}) {
		t.Fatalf("forwarded as %v (each in its own dialect)", m)
	}
}

// TestTraceAndHeaders: a request and its response are recorded (surface a2a,
// direction, session = context id, agent = the upstream, the two sides in
// payload.context); the upstream gets the configured headers and the
// client's A2A-Version, and no secret reaches the trace.
func TestTraceAndHeaders(t *testing.T) {
	up := newUpstream(t, false, nil)
	gw := newGateway(t, map[string]string{"echo": up.URL}, Options{})
	resp := rpc(t, gw.URL+"/a2a/echo", `{"jsonrpc":"2.0","id":"r1","method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m1","contextId":"ctx-42","parts":[{"text":"hi there"}]}}}`, "A2A-Version", "1.0", "Cookie", "session=private")
	if getStr(getObj(getObj(resp, "result"), "message"), "contextId") != "ctx-42" {
		t.Fatalf("%v", resp)
	}
	recs := gw.store.Records()
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	for i, dir := range []string{warden.Outbound, warden.Inbound} {
		r := recs[i]
		if r.Event != MethodSend || r.Surface != "a2a" || r.Direction != dir || r.SessionID != "ctx-42" ||
			r.RequestID != "r1" || r.AgentID != up.URL || r.Decision != "allow" {
			t.Fatalf("record %d: %+v", i, r)
		}
		var in, views map[string]any
		if err := json.Unmarshal(r.Input, &in); err != nil {
			t.Fatal(err)
		}
		if _, has := in["context"]; has {
			t.Fatalf("%s: warden's context in the payload (it is the envelope's): %v", dir, in)
		}
		if err := json.Unmarshal(r.Views, &views); err != nil {
			t.Fatal(err)
		}
		if a := getObj(views, "agent"); getStr(a, "name") != "echo" || getStr(a, "id") != up.URL {
			t.Fatalf("%s agent view %v", dir, views)
		}
		if strings.Contains(string(r.Input), "s3cret") || strings.Contains(string(r.Input), "private") {
			t.Fatalf("a secret in the trace: %s", r.Input)
		}
	}
	h := up.headers()[0]
	if h.Get("X-Upstream-Token") != "s3cret-echo" || h.Get("A2A-Version") != "1.0" || h.Get("Cookie") != "" {
		t.Fatalf("upstream headers %v", h)
	}
}

// TestAgentCard: the card is fetched from the upstream and points at the
// proxy; interfaces warden does not govern are removed.
func TestAgentCard(t *testing.T) {
	card10 := `{"name":"Echo","description":"echoes","version":"1","capabilities":{"streaming":true},
		"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[],
		"supportedInterfaces":[
			{"url":"UP/","protocolBinding":"JSONRPC","protocolVersion":"1.0"},
			{"url":"UP/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"},
			{"url":"grpc.up:443","protocolBinding":"GRPC","protocolVersion":"1.0"}],
		"signatures":[{"protected":"x","signature":"y"}]}`
	card03 := `{"name":"Echo","protocolVersion":"0.3.0","url":"UP/rest","preferredTransport":"HTTP+JSON",
		"additionalInterfaces":[{"url":"UP/rest","transport":"HTTP+JSON"},{"url":"UP/","transport":"JSONRPC"},{"url":"grpc.up:443","transport":"GRPC"}],
		"capabilities":{},"skills":[]}`
	for _, tc := range []struct {
		name, card, path string
		check            func(t *testing.T, card map[string]any, self string)
	}{
		{"1.0 card", card10, "/.well-known/agent-card.json", func(t *testing.T, c map[string]any, self string) {
			ifs := getArr(c, "supportedInterfaces")
			if len(ifs) != 1 || getStr(ifs[0].(map[string]any), "url") != self || getStr(ifs[0].(map[string]any), "protocolBinding") != "JSONRPC" {
				t.Fatalf("supportedInterfaces %v", ifs)
			}
			if _, ok := c["signatures"]; ok {
				t.Fatal("signatures kept")
			}
		}},
		{"0.3 card via agent.json", card03, "/.well-known/agent.json", func(t *testing.T, c map[string]any, self string) {
			ifs := getArr(c, "additionalInterfaces")
			if c["url"] != self || c["preferredTransport"] != "JSONRPC" || len(ifs) != 1 || getStr(ifs[0].(map[string]any), "url") != self {
				t.Fatalf("card %v", c)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := httptest.NewServer(nil)
			up.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/.well-known/agent-card.json" || r.Header.Get("X-Upstream-Token") == "" {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(strings.ReplaceAll(tc.card, "UP", up.URL)))
			})
			defer up.Close()
			gw := newGateway(t, map[string]string{"echo": up.URL}, Options{})
			resp, err := http.Get(gw.URL + "/a2a/echo" + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var c map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%d %v", resp.StatusCode, err)
			}
			b, _ := json.Marshal(c)
			if strings.Contains(string(b), up.URL) || strings.Contains(string(b), "grpc.up") {
				t.Fatalf("the card still points at the upstream: %s", b)
			}
			tc.check(t, c, gw.URL+"/a2a/echo")
		})
	}

	t.Run("a2a-go v2 client from the card", func(t *testing.T) {
		var self *upstream
		card := func(base string) *a2a.AgentCard {
			return &a2a.AgentCard{Name: "Echo", Version: "1", Capabilities: a2a.AgentCapabilities{Streaming: true},
				DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"}, Skills: []a2a.AgentSkill{},
				SupportedInterfaces: []*a2a.AgentInterface{
					a2a.NewAgentInterface(base+"/rest", a2a.TransportProtocolHTTPJSON),
					a2a.NewAgentInterface(base, a2a.TransportProtocolJSONRPC),
				}}
		}
		self = newUpstream(t, false, card)
		gw := newGateway(t, map[string]string{"echo": self.URL}, Options{})
		resolved, err := agentcardResolve(gw.URL + "/a2a/echo")
		if err != nil {
			t.Fatal(err)
		}
		if len(resolved.SupportedInterfaces) != 1 || resolved.SupportedInterfaces[0].URL != gw.URL+"/a2a/echo" {
			t.Fatalf("interfaces %+v", resolved.SupportedInterfaces)
		}
		c, err := a2aclient.NewFromCard(context.Background(), resolved)
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: userMsg("via card")})
		if err != nil || textOf(res.(*a2a.Message)) != "echo: via card" {
			t.Fatalf("%v %v", res, err)
		}
		if len(gw.store.Records()) != 2 {
			t.Fatalf("the call did not go through warden: %d records", len(gw.store.Records()))
		}
	})

	t.Run("extended card over JSON-RPC", func(t *testing.T) {
		up := newUpstream(t, false, nil)
		gw := newGateway(t, map[string]string{"echo": up.URL}, Options{})
		resp := rpc(t, gw.URL+"/a2a/echo", `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{}}`)
		ifs := getArr(getObj(resp, "result"), "supportedInterfaces")
		if len(ifs) != 1 || getStr(ifs[0].(map[string]any), "url") != gw.URL+"/a2a/echo" {
			t.Fatalf("%v", resp)
		}
		if in := find(gw.store.Records(), MethodExtendedCard, warden.Inbound); len(in) != 1 {
			t.Fatalf("records %+v", gw.store.Records())
		}
	})

	t.Run("upstream without a card", func(t *testing.T) {
		up := httptest.NewServer(http.NotFoundHandler())
		defer up.Close()
		gw := newGateway(t, map[string]string{"echo": up.URL + "/a2a/jsonrpc"}, Options{})
		resp, err := http.Get(gw.URL + "/a2a/echo/.well-known/agent-card.json")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway {
			t.Fatalf("status %d", resp.StatusCode)
		}
	})
}

// TestUpstreamFailures: a down, slow, broken or idle upstream becomes a
// JSON-RPC error in time, never a hung client.
func TestUpstreamFailures(t *testing.T) {
	const timeout, idle = 300 * time.Millisecond, 300 * time.Millisecond
	sse := func(w http.ResponseWriter, events ...string) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for _, e := range events {
			_, _ = w.Write([]byte(e))
		}
		w.(http.Flusher).Flush()
	}
	okEvent := `data: {"jsonrpc":"2.0","id":1,"result":{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"working"}}}` + "\n\n"
	down := httptest.NewServer(nil)
	down.Close()
	cases := []struct {
		name    string
		handler http.HandlerFunc // nil: the upstream is down
		method  string
		want    string // in the error message
		events  int    // stream events relayed before the error
	}{
		{"down", nil, "message/send", "unreachable", 0},
		{"slow", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body) // so the server notices the proxy hanging up
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, "message/send", "did not answer within", 0},
		{"slow body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0",`))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, "message/send", "did not answer within", 0},
		{"HTTP 502", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
		}, "message/send", "answered HTTP 502", 0},
		{"not JSON-RPC", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"hello":"world"}`))
		}, "tasks/get", "invalid JSON-RPC response", 0},
		{"stream idle", func(w http.ResponseWriter, r *http.Request) {
			sse(w, okEvent)
			<-r.Context().Done()
		}, "message/stream", "stream idle", 1},
		{"stream garbage", func(w http.ResponseWriter, r *http.Request) {
			sse(w, okEvent, ": keep-alive\n\n", "data: not json\n\n", okEvent)
		}, "message/stream", "not a JSON-RPC response", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := down.URL
			if tc.handler != nil {
				up := httptest.NewServer(tc.handler)
				defer up.Close()
				url = up.URL
			}
			ts, _ := sealid.New(nil, 0)
			gw := newGateway(t, map[string]string{"a": url}, Options{Timeout: timeout, StreamIdle: idle, Tasks: ts})
			tid := ts.SealStableStrings(sealid.Binding{Kind: TaskKind, Server: "a"}, "t", "")
			body := `{"jsonrpc":"2.0","id":1,"method":"` + tc.method + `","params":{"id":"` + tid + `","message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"text","text":"hi"}]}}}`
			start := time.Now()
			var last map[string]any
			if tc.method == "message/stream" {
				evs := sseEvents(t, gw.URL+"/a2a/a", body)
				if len(evs) != tc.events+1 {
					t.Fatalf("events %v", evs)
				}
				last = evs[len(evs)-1]
			} else {
				last = rpc(t, gw.URL+"/a2a/a", body)
			}
			if took := time.Since(start); took > 3*time.Second {
				t.Fatalf("took %s", took)
			}
			if errCode(last) != CodeUpstream || !strings.Contains(errMsg(last), tc.want) || last["id"] != float64(1) {
				t.Fatalf("got %v, want CodeUpstream %q", last, tc.want)
			}
			if d, _ := last["error"].(map[string]any)["data"].(map[string]any); d["name"] != "UPSTREAM_UNAVAILABLE" || d["upstream"] != "a" {
				t.Fatalf("error.data %v, want the upstream named", d)
			}
			if strings.Contains(errMsg(last), "s3cret") {
				t.Fatal("a secret in an error")
			}
		})
	}
}

// TestBadRequests: what is not an A2A JSON-RPC request is answered by
// warden, never forwarded.
func TestBadRequests(t *testing.T) {
	up := newUpstream(t, false, nil)
	gw := newGateway(t, map[string]string{"echo": up.URL}, Options{MaxBody: 1024})
	for _, tc := range []struct {
		name, path, method, body string
		status                   int
		code                     float64
	}{
		{"bad JSON", "/a2a/echo", "POST", `{"jsonrpc":`, 200, CodeParseError},
		{"batch", "/a2a/echo", "POST", `[{"jsonrpc":"2.0","id":1,"method":"tasks/get"}]`, 200, CodeInvalidRequest},
		{"not an object", "/a2a/echo", "POST", `"hi"`, 200, CodeInvalidRequest},
		{"no method", "/a2a/echo", "POST", `{"jsonrpc":"2.0","id":1}`, 200, CodeInvalidRequest},
		{"not 2.0", "/a2a/echo", "POST", `{"jsonrpc":"1.0","id":1,"method":"tasks/get"}`, 200, CodeInvalidRequest},
		{"unknown method", "/a2a/echo", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, 200, CodeMethodNotFound},
		{"over the limit", "/a2a/echo", "POST", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"` + strings.Repeat("x", 2000) + `"}}`, 200, CodeInvalidRequest},
		{"unknown agent", "/a2a/nope", "POST", `{"jsonrpc":"2.0","id":1,"method":"tasks/get"}`, 404, CodeUpstream},
		// Issue 7, measurements 2 and 6: ambiguous JSON is refused, never
		// forwarded; JSON-RPC errors as the spec says.
		{"duplicate key (a secret the policies would not see)", "/a2a/echo", "POST", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"text","text":"AKIAIOSFODNN7EXAMPLE","text":"hi"}]}}}`, 200, CodeInvalidRequest},
		{"keys differing only in case", "/a2a/echo", "POST", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","Method":"message/send","params":{"id":"x"}}`, 200, CodeInvalidRequest},
		{"[[[ is a parse error", "/a2a/echo", "POST", `[[[`, 200, CodeParseError},
		{"a method that is not a string", "/a2a/echo", "POST", `{"jsonrpc":"2.0","id":1,"method":5}`, 200, CodeInvalidRequest},
		{"message/send without a message", "/a2a/echo", "POST", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}}`, 200, CodeInvalidParams},
		{"GET", "/a2a/echo", "GET", "", 405, CodeInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, gw.URL+tc.path, strings.NewReader(tc.body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var m map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != tc.status || errCode(m) != tc.code {
				t.Fatalf("%d %v %v", resp.StatusCode, m, err)
			}
		})
	}
	if len(up.methods()) != 0 || len(gw.store.Records()) != 0 {
		t.Fatalf("forwarded %v, recorded %d", up.methods(), len(gw.store.Records()))
	}
}

// TestModifiedMethodRefused: a modify may not turn the request into another
// method (the decided event would not be the forwarded one).
func TestModifiedMethodRefused(t *testing.T) {
	m, ok := restore(map[string]any{"jsonrpc": "2.0", "method": "message/send"}, json.RawMessage(`7`))
	if !ok || string(m["id"].(json.RawMessage)) != "7" {
		t.Fatalf("%v", m)
	}
	if sameEvent(m, MethodCancel) || !sameEvent(m, MethodSend) || !sameEvent(map[string]any{"method": "SendMessage"}, MethodSend) {
		t.Fatal("sameEvent")
	}
}

// resultView is the message view the core builds of an A2A response result.
func resultView(r map[string]any) warden.Message {
	ev := &warden.Event{Name: "message/stream", Payload: map[string]any{"jsonrpc": "2.0", "id": 1.0, "result": r}}
	catalog.Views(ev)
	return ev.Message
}
