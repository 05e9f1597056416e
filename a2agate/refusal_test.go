package a2agate

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wardenhq/warden/jsonrpc"
)

// TestDenyThroughA2AGo: the official a2a-go v2 client surfaces warden's
// deny as an *a2a.Error that is none of A2A's own errors (TaskNotFound
// above all, which -32001 used to be), whose ErrorInfo metadata carries
// warden's name for it, the reason and the trace record id — a request
// and a stream alike.
func TestDenyThroughA2AGo(t *testing.T) {
	up := newUpstream(t, false, nil)
	gw := newGateway(t, map[string]string{"echo": up.URL}, Options{})
	c := client10(t, gw.URL+"/a2a/echo")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	check := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error, want warden's deny", what)
		}
		for _, own := range []error{a2a.ErrTaskNotFound, a2a.ErrTaskNotCancelable, a2a.ErrUnsupportedOperation,
			a2a.ErrInvalidAgentResponse, a2a.ErrUnauthenticated, a2a.ErrUnauthorized} {
			if errors.Is(err, own) {
				t.Fatalf("%s: %v reads as A2A's %v", what, err, own)
			}
		}
		var ae *a2a.Error
		if !errors.As(err, &ae) {
			t.Fatalf("%s: %T %v, want an *a2a.Error", what, err, err)
		}
		md, _ := ae.ErrorInfo().Value["metadata"].(map[string]string)
		if md["name"] != jsonrpc.NameDenied || md["reason"] != "launch codes stay home" || md["recordId"] == "" {
			t.Fatalf("%s: ErrorInfo metadata %v", what, ae.ErrorInfo().Value["metadata"])
		}
		for _, r := range gw.store.Records() {
			if r.ID == md["recordId"] {
				if r.Decision != "deny" {
					t.Fatalf("%s: record %s is a %s", what, r.ID, r.Decision)
				}
				return
			}
		}
		t.Fatalf("%s: recordId %q names no record", what, md["recordId"])
	}
	_, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: userMsg("here are the launch codes")})
	check("send", err)
	var serr error
	for _, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: userMsg("stream the launch codes")}) {
		if err != nil {
			serr = err
			break
		}
	}
	check("stream", serr)
	if len(up.methods()) != 0 {
		t.Fatalf("the agent was reached: %v", up.methods())
	}
}
