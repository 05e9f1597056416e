package a2agate

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/approval/approvaltest"
)

// askWire asks about anything that mentions a wire, written the natural
// way: no direction. The agent's answers repeat the request's text, so
// without the cover every answer and streamed event would ask again.
const askWire = `
id: ask-wire
version: "1"
events: ["message/*", "tasks/*"]
when: 'text.contains("wire")'
decision: ask
reason: money moves need approval
`

// One approval covers an A2A request, its answer and every event of its
// stream: the a2a-go client's send and stream each ask once.
func TestAskOnce(t *testing.T) {
	core, st := approvaltest.NewCore(t, askWire)
	up := newUpstream(t, false, nil)
	mux := http.NewServeMux()
	mux.Handle("/a2a/", New(core, map[string]warden.Upstream{"echo": {Name: "echo", URL: up.URL}}, Options{}))
	gw := httptest.NewServer(mux)
	t.Cleanup(gw.Close)

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	appr := approvaltest.ApproveAll(ctx, core.M, "ops")
	count := func() []string {
		var events []string
		for _, a := range appr.Approved() {
			events = append(events, a.Event)
		}
		return events
	}
	c := client10(t, gw.URL+"/a2a/echo")
	cctx, ccancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer ccancel()

	res, err := c.SendMessage(cctx, &a2a.SendMessageRequest{Message: userMsg("wire 100 EUR")})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	if m, ok := res.(*a2a.Message); !ok || textOf(m) != "echo: wire 100 EUR" {
		t.Fatalf("send answered %#v", res)
	}
	if got := count(); !slices.Equal(got, []string{MethodSend}) {
		t.Fatalf("send: approvals of %v, want one", got)
	}

	var artifact string
	n := 0
	for ev, err := range c.SendStreamingMessage(cctx, &a2a.SendMessageRequest{Message: userMsg("task wire")}) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		n++
		if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			for _, p := range a.Artifact.Parts {
				artifact += p.Text()
			}
		}
	}
	if artifact != "result: task wire" || n < 3 {
		t.Fatalf("stream: %d events, artifact %q", n, artifact)
	}
	if got := count(); !slices.Equal(got, []string{MethodSend, MethodStream}) {
		t.Fatalf("stream: approvals of %v, want one more", got)
	}
	covered := 0
	for _, r := range st.Records() {
		if r.Direction == warden.Inbound && slices.Contains(r.ReasonCodes, warden.CodeApprovalCovered) {
			covered++
		}
	}
	if covered < 2 { // the send's answer, the stream's artifact
		t.Fatalf("%d inbound records covered by an approval, want at least 2", covered)
	}
}
