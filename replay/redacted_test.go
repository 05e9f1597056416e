package replay_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/replay"
	"github.com/wardenhq/warden/sqlite"
)

const noDelete = `id: no-delete
version: "1"
events: ["steps/toolCallRequest"]
when: 'tool.name == "delete_database"'
decision: deny
reason: deleting databases is not allowed
`

// TestRedactedInputIsNoted records with the trace's default redaction and
// replays with the very same policies: the tool call whose secret the
// trace redacted is no longer denied by the pack's secret policy, which
// reads secrets(), and is noted; the call denied by a policy that reads no
// detector replays unchanged; a redacted email only changes an audit
// policy's result, not a decision.
func TestRedactedInputIsNoted(t *testing.T) {
	data := t.TempDir()
	pol := policyDir(t, noDelete)
	g, err := guardian.Open(guardian.Options{Config: config.Default(), Policies: []string{pol}, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	aos := func(p map[string]any) *warden.Event {
		return &warden.Event{Name: "steps/toolCallRequest", Surface: warden.SurfaceAOS, Payload: p}
	}
	for _, ev := range []*warden.Event{
		aos(toolCall(1, "http_post", map[string]any{"body": "aws_access_key_id=AKIAIOSFODNN7EXAMPLE"})),
		aos(toolCall(2, "delete_database", map[string]any{"name": "prod"})),
		aos(toolCall(3, "send_email", map[string]any{"to": "bob@example.com"})),
	} {
		if _, err := g.Decide(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	g.Close(context.Background())

	st, err := sqlite.OpenReadOnly(data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := replay.Open(guardian.Options{Policies: []string{pol}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), st, audit.Query{})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Summary
	if s.Replayed != 3 || s.Changed != 1 || s.Redacted != 1 || len(rep.Changed) != 1 {
		t.Fatalf("%+v %+v", s, rep.Changed)
	}
	c := rep.Changed[0]
	if c.Tool != "http_post" || c.Old.Decision != "deny" || c.Old.Policy != "deny-secrets-in-tool-calls" ||
		c.New.Decision != "allow" || !slices.Contains(c.Notes, replay.NoteRedacted) {
		t.Errorf("%+v", c)
	}
	want := []replay.PolicyDelta{
		{Policy: "audit-contact-pii-in-tool-calls", Unmatched: 1},
		{Policy: "deny-secrets-in-tool-calls", Unmatched: 1},
	}
	if !slices.Equal(s.Policies, want) {
		t.Errorf("policies %+v, want %+v", s.Policies, want)
	}
	recs, err := audit.Collect(context.Background(), st, audit.Query{Tool: "http_post"}, 1)
	if err != nil || len(recs) != 1 || !strings.Contains(string(recs[0].Input), "[REDACTED:aws_access_key:") {
		t.Fatalf("the trace did not redact the key: %v %s", err, recs[0].Input)
	}
}
