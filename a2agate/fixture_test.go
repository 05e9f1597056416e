package a2agate

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/pipeline"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/storetest"
)

// testPolicies govern the tests' traffic: outbound "launch codes" are
// denied, outbound emails redacted, a streamed event saying "forbidden"
// denied, a push config to evil.example denied, and a response saying
// "classified" denied.
const testPolicies = `
id: no-launch-codes
version: "1"
events: ["message/send", "message/stream"]
when: 'direction == "outbound" && message.text.contains("launch codes")'
decision: deny
reason: launch codes stay home
---
id: redact-emails
version: "2"
events: ["message/send"]
when: 'direction == "outbound" && message.text.contains("@")'
decision: modify
modify:
  - redact: [email]
---
id: redact-agent-emails
version: "1"
events: ["message/send", "message/stream"]
when: 'direction == "inbound" && message.text.contains("@")'
decision: modify
modify:
  - redact: [email]
---
id: no-forbidden-stream
version: "1"
events: ["message/stream", "tasks/resubscribe"]
when: 'direction == "inbound" && message.text.contains("forbidden")'
decision: deny
reason: forbidden content in the stream
---
id: no-evil-push
version: "1"
events: ["tasks/pushNotificationConfig/set"]
when: 'direction == "outbound" && text.contains("evil.example")'
decision: deny
reason: push to evil.example
---
id: no-classified-answers
version: "1"
events: ["message/send"]
when: 'direction == "inbound" && message.text.contains("classified")'
decision: deny
reason: classified answer
`

// memStore is the shared in-memory trace (storetest.Mem).
type memStore = storetest.Mem

// echoAgent is the upstream A2A agent. It answers a message with a message
// "echo: TEXT", except:
//   - "task ...": a task (submitted, working "working on it", an artifact
//     "result: TEXT", completed "done");
//   - "... wait": the task stays working until canceled (or 5s);
//   - "stream forbidden": a task whose second status update says "forbidden";
//   - "classified": answers "classified: TEXT";
//   - "whois": answers with an email address; "stream whois" streams one.
type echoAgent struct {
	mu       sync.Mutex
	texts    []string      // every message text the agent received
	streamed chan struct{} // closed when a "stream forbidden" execution ends
}

func newEchoAgent() *echoAgent { return &echoAgent{streamed: make(chan struct{})} }

func (e *echoAgent) received() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.texts)
}

func textOf(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range m.Parts {
		if t, ok := p.Content.(a2a.Text); ok {
			b.WriteString(string(t))
		}
	}
	return b.String()
}

func agentMsg(ec *a2asrv.ExecutorContext, text string) *a2a.Message {
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(text))
}

func (e *echoAgent) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	text := textOf(ec.Message)
	e.mu.Lock()
	e.texts = append(e.texts, text)
	e.mu.Unlock()
	return func(yield func(a2a.Event, error) bool) {
		switch {
		case text == "stream forbidden":
			defer close(e.streamed)
			steps := []string{"step one", "forbidden step", "step three"}
			if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
			for _, s := range steps {
				wait := 20 * time.Millisecond
				if s == "step three" {
					wait = 3 * time.Second // the proxy has closed the stream long before
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
				if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, agentMsg(ec, s)), nil) {
					return
				}
			}
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, agentMsg(ec, "done")), nil)
		case text == "stream whois":
			if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
			if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, agentMsg(ec, "mail agent@example.com")), nil) {
				return
			}
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, agentMsg(ec, "done")), nil)
		case strings.HasPrefix(text, "task"):
			if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
			if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, agentMsg(ec, "working on it")), nil) {
				return
			}
			if strings.HasSuffix(text, "wait") {
				select {
				case <-ctx.Done():
					return
				case <-time.After(5 * time.Second):
				}
			}
			if !yield(a2a.NewArtifactEvent(ec, a2a.NewTextPart("result: "+text)), nil) {
				return
			}
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, agentMsg(ec, "done")), nil)
		default:
			reply := "echo: " + text
			if strings.Contains(text, "classified") {
				reply = "classified: " + text
			}
			if text == "whois" {
				reply = "reach me at agent@example.com"
			}
			m := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(reply))
			m.ContextID = ec.ContextID
			yield(m, nil)
		}
	}
}

func (e *echoAgent) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

type noPush struct{}

func (noPush) SendPush(context.Context, *a2a.PushConfig, a2a.Event) error { return nil }

// upstream is an A2A agent served over JSON-RPC, in the 1.0 binding
// (a2asrv) or the 0.3 one (a2av0), counting the JSON-RPC calls it gets.
type upstream struct {
	*httptest.Server
	agent  *echoAgent
	mu     sync.Mutex
	calls  []string // JSON-RPC methods received
	hdrs   []http.Header
	active atomic.Int32 // JSON-RPC requests being served
}

// waitStreamsClosed waits until the upstream serves no request: the proxy
// closed the upstream stream (the agent would have sent more for seconds).
func (u *upstream) waitStreamsClosed(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for u.active.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the upstream stream is still open")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// agentcardResolve fetches a card the way a2a-go v2 clients do.
func agentcardResolve(base string) (*a2a.AgentCard, error) {
	return agentcard.NewResolver(nil).Resolve(context.Background(), base)
}

func (u *upstream) methods() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.calls)
}

func (u *upstream) headers() []http.Header {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.hdrs)
}

func newUpstream(t *testing.T, v03 bool, card func(base string) *a2a.AgentCard) *upstream {
	t.Helper()
	u := &upstream{agent: newEchoAgent()}
	extended := &a2a.AgentCard{Name: "Echo (extended)", SupportedInterfaces: []*a2a.AgentInterface{
		a2a.NewAgentInterface("http://upstream.invalid/", a2a.TransportProtocolJSONRPC),
		a2a.NewAgentInterface("upstream.invalid:443", a2a.TransportProtocolGRPC),
	}}
	h := a2asrv.NewHandler(u.agent, a2asrv.WithPushNotifications(push.NewInMemoryStore(), noPush{}),
		a2asrv.WithExtendedAgentCard(extended))
	var rpc http.Handler
	if v03 {
		rpc = a2av0.NewJSONRPCHandler(h)
	} else {
		rpc = a2asrv.NewJSONRPCHandler(h)
	}
	mux := http.NewServeMux()
	if card != nil {
		mux.HandleFunc("/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
			a2asrv.NewStaticAgentCardHandler(card(u.URL)).ServeHTTP(w, r)
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			u.active.Add(1)
			defer u.active.Add(-1)
			body, _ := io.ReadAll(r.Body)
			var env struct{ Method string }
			_ = json.Unmarshal(body, &env)
			u.mu.Lock()
			u.calls = append(u.calls, env.Method)
			u.hdrs = append(u.hdrs, r.Header.Clone())
			u.mu.Unlock()
			r.Body = io.NopCloser(strings.NewReader(string(body)))
		}
		rpc.ServeHTTP(w, r)
	})
	u.Server = httptest.NewServer(mux)
	t.Cleanup(u.Close)
	return u
}

// gateway is warden's A2A proxy in front of upstreams, deciding with
// testPolicies and recording into store.
type gateway struct {
	*httptest.Server
	store *memStore
}

func newGateway(t *testing.T, agents map[string]string, opts Options) *gateway {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a2a.yaml"), []byte(testPolicies), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := policy.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.NewMem()
	dec := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "policy", Handler: policy.NewEngine(set, policy.Options{})}), Views: catalog.Views, Store: st})
	ups := map[string]warden.Upstream{}
	for name, u := range agents {
		ups[name] = warden.Upstream{Name: name, URL: u, Headers: map[string]string{"X-Upstream-Token": "s3cret-" + name}}
	}
	mux := http.NewServeMux()
	mux.Handle("/a2a/", New(dec, ups, opts))
	// The caller named by X-Tenant and X-Caller, as auth puts a token's in
	// the context (none: the anonymous caller).
	withCaller := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := warden.Principal{Name: r.Header.Get("X-Caller"), Tenant: r.Header.Get("X-Tenant")}
		mux.ServeHTTP(w, r.WithContext(warden.WithPrincipal(r.Context(), p)))
	})
	g := &gateway{Server: httptest.NewServer(withCaller), store: st}
	t.Cleanup(g.Close)
	return g
}

// rpc posts a raw JSON-RPC request and returns the decoded response.
func rpc(t *testing.T, url, body string, hdr ...string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("response %d is not JSON: %q", resp.StatusCode, data)
	}
	return m
}

// sseEvents posts a streaming request and returns each data payload.
func sseEvents(t *testing.T, url, body string) []map[string]any {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("not a stream (%s): %s", ct, b)
	}
	data, _ := io.ReadAll(resp.Body)
	var out []map[string]any
	for _, block := range strings.Split(string(data), "\n\n") {
		var payload strings.Builder
		for _, line := range strings.Split(block, "\n") {
			if v, ok := strings.CutPrefix(line, "data:"); ok {
				payload.WriteString(strings.TrimPrefix(v, " "))
			}
		}
		if payload.Len() == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(payload.String()), &m); err != nil {
			t.Fatalf("stream event is not JSON: %q", payload.String())
		}
		out = append(out, m)
	}
	return out
}

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

func errMsg(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

// find returns the records of event in direction.
func find(recs []audit.Record, event, dir string) []audit.Record {
	var out []audit.Record
	for _, r := range recs {
		if r.Event == event && r.Direction == dir {
			out = append(out, r)
		}
	}
	return out
}
