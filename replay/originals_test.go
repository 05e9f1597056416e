package replay_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/replay"
	"github.com/wardenhq/warden/seal"
	"github.com/wardenhq/warden/unseal"
)

// companyEmail holds an email to anyone outside the company: live, it
// reads the address; on the trace's redaction it sees a mark, which no
// address ends with.
const companyEmail = `id: company-email
version: "1"
events: ["steps/toolCallRequest"]
when: 'tool.name == "send_email" && !string(tool.args.to).endsWith("@company.io")'
decision: ask
reason: external email needs approval
`

// TestWithOriginals (issue 28): with the sealed originals opened, the
// unchanged set replays unchanged over traffic whose secrets and
// addresses the trace redacted; without them the secret's deny and the
// company email's allow change, as before. A changed reason that quotes
// an original shows its mark instead. Unseal and forget records are
// skipped and counted; a forgotten session's records are decided on the
// redacted form again, counted as erased.
func TestWithOriginals(t *testing.T) {
	t.Setenv(seal.KEKFileEnv, filepath.Join(t.TempDir(), "seal.kek"))
	ctx := context.Background()
	live := policyDir(t, noDelete+"---\n"+companyEmail)
	g, err := guardian.Open(guardian.Options{Config: config.Default(), Policies: []string{live}, Data: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(ctx)
	if g.Unseal() == nil {
		t.Fatal("the Guardian seals nothing")
	}
	for i, c := range []struct {
		tool string
		args map[string]any
	}{
		{"http_post", map[string]any{"body": "aws_access_key_id=AKIAIOSFODNN7EXAMPLE"}}, // deny: a secret
		{"delete_database", map[string]any{"name": "prod"}},                             // deny: no detector
		{"send_email", map[string]any{"to": "alice@company.io"}},                        // allow
		{"send_email", map[string]any{"to": "bob@evil.example"}},                        // ask
	} {
		if _, err := g.Decide(ctx, &warden.Event{Name: "steps/toolCallRequest", Surface: warden.SurfaceAOS, Payload: toolCall(i, c.tool, c.args)}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := replay.Open(guardian.Options{Policies: []string{live}})
	if err != nil {
		t.Fatal(err)
	}
	run := func(r *replay.Replayer) *replay.Report {
		t.Helper()
		rep, err := r.Run(ctx, g.Store(), audit.Query{})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}

	rep := run(r.WithOriginals(g.Unseal()))
	if s := rep.Summary; s.Replayed != 4 || s.Changed != 0 || s.Originals != (replay.Originals{Revealed: 3}) {
		t.Fatalf("with the originals: %+v %+v", s, rep.Changed)
	}
	rep = run(r)
	if s := rep.Summary; s.Changed != 2 || s.Redacted != 2 || s.Originals != (replay.Originals{Redacted: 3}) ||
		rep.Changed[0].Tool != "http_post" || rep.Changed[1].Old.Decision != "allow" || rep.Changed[1].New.Decision != "ask" {
		t.Fatalf("as stored: %+v %+v", s, rep.Changed)
	}
	if rep := run(r.WithOriginals(nil)); rep.Summary.Changed != 2 {
		t.Errorf("WithOriginals(nil): %+v", rep.Summary)
	}

	// A candidate set whose reason quotes the address.
	quoting, err := replay.Open(guardian.Options{Policies: []string{policyDir(t, noDelete+"---\n"+strings.Replace(companyEmail,
		"decision: ask\nreason: external email needs approval", `decision: deny
reasonExpr: '"no email to " + string(tool.args.to)'`, 1))}})
	if err != nil {
		t.Fatal(err)
	}
	rep = run(quoting.WithOriginals(g.Unseal()))
	if len(rep.Changed) != 1 || rep.Changed[0].New.Decision != "deny" ||
		!strings.HasPrefix(rep.Changed[0].New.Reason, "no email to [REDACTED:email:") || strings.Contains(rep.Changed[0].New.Reason, "bob@") {
		t.Fatalf("a reason quoting an original: %+v", rep.Changed)
	}

	// An unseal and a forget: records, not steps.
	recs, err := audit.Collect(ctx, g.Store(), audit.Query{Tool: "http_post"}, 1)
	if err != nil || len(recs) != 1 {
		t.Fatal(recs, err)
	}
	v := unseal.Viewer{Name: "tester", Via: "api"}
	if _, o, err := g.Unseal().Reveal(ctx, v, &recs[0]); err != nil || len(o.Originals) != 1 {
		t.Fatalf("reveal: %+v %v", o, err)
	}
	if n, err := g.Unseal().Forget(ctx, v, "", recs[0].SessionID); err != nil || n != 1 {
		t.Fatalf("forget: %d %v", n, err)
	}
	rep = run(r.WithOriginals(g.Unseal()))
	s := rep.Summary
	if s.Replayed != 4 || s.SkippedUnseal != 2 || s.Changed != 1 || s.Redacted != 1 ||
		s.Originals != (replay.Originals{Revealed: 2, Redacted: 1, Erased: 1}) {
		t.Fatalf("after forget: %+v %+v", s, rep.Changed)
	}
	if c := rep.Changed[0]; c.Tool != "http_post" || !slices.Contains(c.Notes, replay.NoteRedacted) {
		t.Errorf("after forget: %+v", c)
	}
}
