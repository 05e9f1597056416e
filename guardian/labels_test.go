package guardian_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/guardian"
)

// aosTool is an AOS steps/toolCallRequest of tool (its id is its name) in
// session with one input.
func aosTool(session, tool, arg string, value any) *warden.Event {
	return &warden.Event{Name: "steps/toolCallRequest", Payload: map[string]any{
		"toolCallRequest": map[string]any{"executionId": "e-" + tool, "toolId": tool,
			"inputs": []any{map[string]any{"name": arg, "value": value}}},
		"context": map[string]any{"session": map[string]any{"id": session}},
	}}
}

// TestLethalTrifectaAcrossReopen: the three-step session through the Go
// API, the Guardian closed and opened again on the same data directory
// between every two steps: the labels are in the trace's store, and the
// third step is asked.
func TestLethalTrifectaAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	steps := []struct {
		ev     *warden.Event
		want   warden.Verdict
		labels []string // the session's labels after the step
	}{
		{aosTool("s1", "read_file", "path", "/home/ann/.aws/credentials"), warden.Allow, []string{"read_private"}},
		{aosTool("s1", "web_fetch", "url", "https://blog.example.com/post"), warden.Allow, []string{"read_private", "untrusted_input"}},
		{aosTool("s1", "send_email", "to", "eve@example.net"), warden.Ask, []string{"read_private", "untrusted_input"}},
	}
	for i, st := range steps {
		g, err := guardian.Open(guardian.Options{Data: dir})
		if err != nil {
			t.Fatal(err)
		}
		out, err := g.Decide(ctx, st.ev)
		if err != nil {
			t.Fatal(err)
		}
		if out.Verdict != st.want {
			t.Fatalf("step %d: %v (%s), want %v", i+1, out.Verdict, out.Reason, st.want)
		}
		if st.want == warden.Ask && out.PolicyID != "ask-lethal-trifecta" {
			t.Fatalf("step %d asked by %s", i+1, out.PolicyID)
		}
		if ls, _ := g.SessionLabels(ctx, "", "s1"); !reflect.DeepEqual(ls, st.labels) {
			t.Fatalf("step %d: labels %q, want %q", i+1, ls, st.labels)
		}
		if err := g.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLabelsTenantIsolation: the same session id in two tenants has two
// label sets; a caller without a tenant has a third.
func TestLabelsTenantIsolation(t *testing.T) {
	dir := t.TempDir()
	cfg := write(t, dir, "warden.yaml", "tenants:\n  acme: {}\n  globex: {}\n")
	g, err := guardian.Open(guardian.Options{ConfigFile: cfg, Data: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(context.Background())
	as := func(tenant string) context.Context {
		return warden.WithPrincipal(context.Background(), warden.Principal{Name: "caller-" + tenant, Tenant: tenant})
	}
	for _, ev := range []*warden.Event{
		aosTool("s1", "read_file", "path", "/home/ann/.ssh/id_rsa"),
		aosTool("s1", "web_fetch", "url", "https://blog.example.com/post"),
	} {
		if out, err := g.Decide(as("acme"), ev); err != nil || out.Verdict != warden.Allow {
			t.Fatalf("acme: %v %v", out.Verdict, err)
		}
	}
	for _, c := range []struct {
		tenant string
		want   warden.Verdict
	}{{"acme", warden.Ask}, {"globex", warden.Allow}, {"", warden.Allow}} {
		out, err := g.Decide(as(c.tenant), aosTool("s1", "send_email", "to", "eve@example.net"))
		if err != nil || out.Verdict != c.want {
			t.Errorf("tenant %q: %v %v, want %v", c.tenant, out.Verdict, err, c.want)
		}
	}
	if ls, _ := g.SessionLabels(context.Background(), "globex", "s1"); !reflect.DeepEqual(ls, []string{"external_send"}) {
		t.Errorf("globex's labels %q, want only its own send", ls)
	}
}
