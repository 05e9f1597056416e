package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/redact"
	"github.com/wardenhq/warden/seal/sealtest"
	"github.com/wardenhq/warden/server"
	"github.com/wardenhq/warden/storetest"
	"github.com/wardenhq/warden/unseal"
)

const (
	cliRecipient = "bob@external.example"
	cliRedacted  = "[REDACTED:email:"
	cliApprove   = "wdn_cli-approve-0123456789abcdef"
	cliRead      = "wdn_cli-read-0123456789abcdef"
	cliDecide    = "wdn_cli-decide-0123456789abcdef"
)

// sealedApprovalsServer is a warden server whose trace holds a sealed
// step sending mail to cliRecipient and the pending approval it asked,
// and a second approval whose summary holds terminal control sequences.
// It returns the server's URL, the approvals' ids and the trace.
func sealedApprovalsServer(t *testing.T) (string, string, string, *storetest.Mem) {
	t.Helper()
	sealer := sealtest.NewSealer(t)
	st := storetest.NewMem()
	red := redact.New(make([]byte, redact.KeySize))
	ctx := context.Background()
	rec := &audit.Record{ID: "rec-1", Time: time.Now().UTC(), SessionID: "s-42", Event: "steps/toolCallRequest", Surface: "aos",
		Tool: "send_email", Decision: "ask", Caller: "agents", Reason: "email outside example.com needs approval",
		Input: json.RawMessage(`{"tool":"send_email","to":"` + cliRecipient + `"}`)}
	if err := red.RecordFilter(sealer)(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if err := st.Record(ctx, rec); err != nil {
		t.Fatal(err)
	}
	mail := &approval.Approval{ID: approval.NewID(), State: approval.ApprovalPending, Event: rec.Event, Surface: "aos", Tool: "send_email",
		Summary: red.String(`send_email {"to":"` + cliRecipient + `"}`), Reason: rec.Reason, PolicyID: "external-email-needs-approval",
		Created: time.Now().UTC(), Expires: time.Now().Add(time.Hour).UTC(), Key: "k1", RecordID: rec.ID, SessionID: "s-42", Caller: "agents"}
	evil := &approval.Approval{ID: approval.NewID(), State: approval.ApprovalPending, Event: "steps/toolCallRequest", Surface: "aos",
		Tool: "bash\x1b[2J", Summary: "bash \x1b]0;pwned\x07 \u202egnp.exe", Created: time.Now().UTC(), Expires: time.Now().Add(time.Hour).UTC(), Key: "k2"}
	for _, a := range []*approval.Approval{mail, evil} {
		if err := st.CreateApproval(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	c := &auth.Config{}
	for _, e := range []struct {
		name, tok string
		s         auth.Scope
	}{{"ops", cliApprove, auth.Approve}, {"viewer", cliRead, auth.Read}, {"agents", cliDecide, auth.Decide}} {
		h, err := auth.ParseHash(auth.Hash(e.tok))
		if err != nil {
			t.Fatal(err)
		}
		c.Tokens = append(c.Tokens, auth.Token{Name: e.name, SHA256: h, Scopes: e.s})
	}
	m := approval.New(approval.Options{Store: st, Trace: st})
	t.Cleanup(m.Close)
	srv := httptest.NewServer(server.New(server.Options{Store: st, Approvals: m, Unseal: unseal.New(sealer, st),
		Security: server.Security{Auth: c}}))
	t.Cleanup(srv.Close)
	return srv.URL, mail.ID, evil.ID, st
}

// `warden approvals list` and `show` print the real recipient to an
// approve token and the redaction to a read token; every view by the
// approver is recorded; a decide token is refused.
func TestApprovalsCLIOriginals(t *testing.T) {
	url, id, _, st := sealedApprovalsServer(t)
	for _, c := range []struct {
		name  string
		args  []string
		code  int
		want  string // in stdout (or stderr when code != 0)
		avoid string // never in stdout
	}{
		{"approver lists", []string{"list", "--token", cliApprove}, 0, cliRecipient, cliRedacted},
		{"approver lists json", []string{"list", "-o", "json", "--token", cliApprove}, 0, cliRecipient, cliRedacted},
		{"approver shows", []string{"show", id, "--token", cliApprove}, 0, `"to": "` + cliRecipient + `"`, cliRedacted},
		{"approver shows json", []string{"show", id, "-o", "json", "--token", cliApprove}, 0, `"input": {`, cliRedacted},
		{"reader lists", []string{"list", "--token", cliRead}, 0, cliRedacted, cliRecipient},
		{"reader shows", []string{"show", id, "--token", cliRead}, 0, cliRedacted, cliRecipient},
		{"decide token shows", []string{"show", id, "--token", cliDecide}, 1, "lacks the read scope (HTTP 403)", cliRecipient},
		{"no token", []string{"show", id}, 1, "HTTP 401", cliRecipient},
		{"unknown id", []string{"show", "nope", "--token", cliApprove}, 1, "no approval with that id (HTTP 404)", ""},
		{"no id", []string{"show", "--token", cliApprove}, 1, "the approval id is required", ""},
		{"bad -o", []string{"show", id, "-o", "yaml", "--token", cliApprove}, 1, "expected table or json", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errs, code := runCmd(t, "", append(append([]string{"approvals"}, c.args...), "--server", url)...)
			got := out
			if c.code != 0 {
				got = errs
			}
			if code != c.code || !strings.Contains(got, c.want) || c.avoid != "" && strings.Contains(out, c.avoid) {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s\nwant exit %d with %q, without %q", code, out, errs, c.code, c.want, c.avoid)
			}
		})
	}
	// The table's lines: the summary, the reason's text and the input.
	out, _, _ := runCmd(t, "", "approvals", "show", id, "--token", cliApprove, "--server", url)
	for _, line := range []string{"SUMMARY  send_email {\"to\":\"" + cliRecipient + "\"}\n", "STATE    pending\n",
		"POLICY   external-email-needs-approval\n", "INPUT\n  {\n    \"tool\": \"send_email\",\n    \"to\": \"" + cliRecipient + "\"\n  }\n"} {
		if !strings.Contains(out, line) {
			t.Errorf("show lacks %q:\n%s", line, out)
		}
	}
	recs, err := audit.Collect(context.Background(), st, audit.Query{Surface: unseal.Surface}, 100)
	if err != nil {
		t.Fatal(err)
	}
	// list, list -o json, show, show -o json and the table above: five
	// views by the approver, none by the reader.
	if len(recs) != 5 {
		t.Fatalf("%d unseal records, want 5", len(recs))
	}
	for _, r := range recs {
		if r.Caller != "ops" || !strings.Contains(string(r.Input), `"record":"rec-1"`) {
			t.Errorf("unseal record: %+v %s", r, r.Input)
		}
	}
}

// What an agent put in an approval's texts does not reach the approver's
// terminal as control sequences (escape, bell, bidirectional override):
// list and show print them escaped.
func TestAttackApprovalsCLIControlSequences(t *testing.T) {
	url, _, evil, _ := sealedApprovalsServer(t)
	for _, args := range [][]string{{"list"}, {"show", evil}} {
		out, errs, code := runCmd(t, "", append(append([]string{"approvals"}, args...), "--token", cliApprove, "--server", url)...)
		if code != 0 || strings.ContainsAny(out, "\x1b\x07\u202e") || !strings.Contains(out, `bash \u001b]0;pwned\u0007 \u202egnp.exe`) {
			t.Errorf("%v: exit %d %q %s", args, code, out, errs)
		}
	}
}

// --help prints usage on stdout and exits 0, for the command and each
// subcommand.
func TestApprovalsHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--help"}, "warden approvals show ID [-o table|json]"},
		{[]string{"-h"}, "A read token sees them redacted"},
		{[]string{"help"}, "warden approvals list"},
		{[]string{"show", "--help"}, "-o string"},
		{[]string{"show", "ID", "-h"}, "one approval and the input"},
		{[]string{"list", "--help"}, "-state string"},
		{[]string{"approve", "-h"}, "-reason string"},
	} {
		out, errs, code := runCmd(t, "", append([]string{"approvals"}, c.args...)...)
		if code != 0 || !strings.Contains(out, c.want) || errs != "" {
			t.Errorf("%v: exit %d\nstdout: %s\nstderr: %s", c.args, code, out, errs)
		}
	}
}
