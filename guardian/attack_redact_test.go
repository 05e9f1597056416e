package guardian_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/audit"

	"github.com/jackc/pgx/v5"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/internal/buftest"
	"github.com/wardenhq/warden/internal/pgtest"
	"github.com/wardenhq/warden/seal"
	"github.com/wardenhq/warden/server"
	"github.com/wardenhq/warden/stats"
	"github.com/wardenhq/warden/unseal"
)

// The trace at rest is redacted: these attacks put a secret where the
// redaction did not look — a tool or server name, a field named like a
// credential, an approver's reason — and then look for it in every file of
// the data directory (SQLite), every row of the tables (PostgreSQL, with
// WARDEN_POSTGRES_URL), and every page and API that shows it.

const (
	awsKey   = "AKIAIOSFODNN7EXAMPLE"
	ghToken  = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
	fieldKey = "Zx8fQ2mP9wLk3Rt7Vb1N" // a credential by its key only
)

// attackBackend is a Guardian over one kind of trace, with the server that
// shows it (no auth: every page and API is open).
type attackBackend struct {
	g     *guardian.Guardian
	srv   *httptest.Server
	dir   string // the data directory (SQLite trace, or the key beside PostgreSQL)
	pgURL string // "" for SQLite
	kek   string // the sealing KEK's file, outside dir
	log   *buftest.Buffer
}

// forEachBackend runs f over a SQLite data directory and, with
// WARDEN_POSTGRES_URL, a PostgreSQL trace; policies are policy files added
// to the built-in pack.
func forEachBackend(t *testing.T, policies string, f func(t *testing.T, b *attackBackend)) {
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			b := &attackBackend{dir: filepath.Join(t.TempDir(), "data"), kek: filepath.Join(t.TempDir(), "seal.kek"), log: &buftest.Buffer{}}
			t.Setenv(seal.KEKFileEnv, b.kek)
			cfgDir := t.TempDir()
			yaml := ""
			if policies != "" {
				write(t, cfgDir, "p.yaml", policies)
				yaml += "policies: [./p.yaml]\n"
			}
			if name == "postgres" {
				b.pgURL = pgtest.SchemaURL(t)
				yaml += "store: \"" + b.pgURL + "\"\n"
			}
			counts := stats.New(nil)
			logger := slog.New(slog.NewTextHandler(b.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
			g, err := guardian.Open(guardian.Options{ConfigFile: write(t, cfgDir, "warden.yaml", yaml), Data: b.dir, Observer: counts, Logger: logger})
			if err != nil {
				t.Fatal(err)
			}
			b.g = g
			b.srv = httptest.NewServer(server.New(server.Options{Store: g.Store(), Approvals: g.Approvals(), Stats: counts}))
			defer func() {
				b.srv.Close()
				if err := g.Close(context.Background()); err != nil {
					t.Error(err)
				}
				b.noSecretAtRest(t)
			}()
			f(t, b)
		})
	}
}

var attackSecrets = []string{awsKey, ghToken, fieldKey}

// noSecret fails t when body holds one of the secrets.
func noSecret(t *testing.T, where, body string) {
	t.Helper()
	for _, s := range attackSecrets {
		if strings.Contains(body, s) {
			t.Errorf("%s holds the secret %s:\n%.2000s", where, s, body)
		}
	}
}

// noSecretAtRest looks in every file of the data directory, the logs of
// the Guardian and the server and, for PostgreSQL, every row of every
// table.
func (b *attackBackend) noSecretAtRest(t *testing.T) {
	t.Helper()
	noSecret(t, "the log", b.log.String())
	filepath.Walk(b.dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			data, _ := os.ReadFile(p)
			noSecret(t, p, string(data))
		}
		return nil
	})
	if b.pgURL == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, b.pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(tables) == 0 {
		t.Fatalf("tables %v %v", tables, err)
	}
	for _, table := range tables {
		for _, s := range attackSecrets {
			var n int
			if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{table}.Sanitize()+` t WHERE strpos(t::text, $1) > 0`, s).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				t.Errorf("PostgreSQL table %s: %d rows hold the secret %s", table, n, s)
			}
		}
	}
}

// get fetches path from the server; it must answer 200 without a secret.
func (b *attackBackend) get(t *testing.T, path string) string {
	t.Helper()
	resp, err := http.Get(b.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	noSecret(t, "GET "+path, string(body))
	return string(body)
}

// records returns every record of the trace.
func (b *attackBackend) records(t *testing.T) []audit.Record {
	t.Helper()
	rs, err := audit.Collect(context.Background(), b.g.Store(), audit.Query{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// A secret used as a tool name (or an MCP server's name) is stored, listed
// and shown redacted as the same record's reason and input are: runs.tool,
// /api/runs, the console's decisions, decision and session pages and the
// overview's most denied tools. The replacement is stable, so the redacted
// name still groups and filters.
func TestAttackSecretToolNameRedacted(t *testing.T) {
	forEachBackend(t, "", func(t *testing.T, b *attackBackend) {
		ctx := context.Background()
		for range 2 {
			out, err := b.g.Decide(ctx, &warden.Event{Name: "tool.pre_call", Payload: map[string]any{
				"session_id": "s1", "tool_name": awsKey, "tool_input": map[string]any{"path": "/tmp/x"}}})
			if err != nil || out.Verdict != warden.Deny {
				t.Fatalf("%v %v", out.Verdict, err)
			}
		}
		out, err := b.g.Decide(ctx, &warden.Event{Name: "protocols/MCP", Surface: warden.SurfaceMCP, Direction: warden.Outbound,
			Payload: map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
				"params": map[string]any{"name": ghToken, "arguments": map[string]any{"q": "weather"}}},
			Envelope: warden.Envelope{SessionID: "s1", Server: ghToken}})
		if err != nil || out.Verdict != warden.Deny {
			t.Fatalf("MCP: %v %v", out.Verdict, err)
		}
		rs := b.records(t)
		if len(rs) != 3 {
			t.Fatalf("%d records", len(rs))
		}
		for _, r := range rs {
			if !strings.HasPrefix(r.Tool, "[REDACTED:") {
				t.Errorf("record %s: tool %q", r.ID, r.Tool)
			}
		}
		if rs[1].Tool != rs[2].Tool || rs[0].Tool == rs[1].Tool {
			t.Errorf("redacted tool names do not group: %q %q %q", rs[0].Tool, rs[1].Tool, rs[2].Tool)
		}
		same, err := audit.Collect(ctx, b.g.Store(), audit.Query{Tool: rs[1].Tool}, 10)
		if err != nil || len(same) != 2 {
			t.Errorf("filter by the redacted tool: %d records, %v", len(same), err)
		}
		b.get(t, "/api/runs")
		b.get(t, "/api/hooks/runs")
		b.get(t, "/")
		b.get(t, "/sessions/s1")
		for _, r := range rs {
			b.get(t, "/api/runs/"+r.ID)
			b.get(t, "/decisions/"+r.ID)
		}
		if body := b.get(t, "/overview"); !strings.Contains(body, "[REDACTED:aws_access_key:") {
			t.Errorf("the overview does not list the denied tool, redacted:\n%.3000s", body)
		}
	})
}

// A credential known only by its key — a tool argument named api_key, an
// Authorization header, an AOS input named password, an MCP argument named
// token — is denied by the built-in pack and redacted at rest;
// secret-named arguments that hold no credential are allowed.
func TestAttackSecretFieldDetected(t *testing.T) {
	forEachBackend(t, "", func(t *testing.T, b *attackBackend) {
		ctx := context.Background()
		ctxAOS := map[string]any{"session": map[string]any{"id": "s2"},
			"agent": map[string]any{"id": "a1", "tools": []any{map[string]any{"id": "t-http", "name": "http_post", "type": "function_call"}}}}
		for _, c := range []struct {
			name string
			ev   *warden.Event
			want warden.Verdict
		}{
			{"api_key argument", &warden.Event{Name: "tool.pre_call", Payload: map[string]any{"session_id": "s2", "tool_name": "http_post",
				"tool_input": map[string]any{"url": "https://api.example.com", "api_key": fieldKey}}}, warden.Deny},
			{"Authorization header", &warden.Event{Name: "tool.pre_call", Payload: map[string]any{"session_id": "s2", "tool_name": "http_post",
				"tool_input": map[string]any{"headers": map[string]any{"Authorization": "Bearer " + fieldKey}}}}, warden.Deny},
			{"AOS input named password", &warden.Event{Name: "steps/toolCallRequest", Surface: warden.SurfaceAOS, SessionID: "s2",
				Payload: map[string]any{"toolCallRequest": map[string]any{"executionId": "e1", "toolId": "t-http",
					"inputs": []any{map[string]any{"name": "user", "value": "ops"}, map[string]any{"name": "password", "value": fieldKey}}},
					"context": ctxAOS}}, warden.Deny},
			{"MCP argument named token", &warden.Event{Name: "protocols/MCP", Surface: warden.SurfaceMCP, Direction: warden.Outbound,
				Payload: map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
					"params": map[string]any{"name": "fetch", "arguments": map[string]any{"token": fieldKey}}},
				Envelope: warden.Envelope{SessionID: "s2", Server: "web"}}, warden.Deny},
			{"no credential", &warden.Event{Name: "tool.pre_call", Payload: map[string]any{"session_id": "s2", "tool_name": "llm_complete",
				"tool_input": map[string]any{"max_tokens": 100, "token_count": 12, "token": "abc", "password": "",
					"pageToken": "CiAKGjBpNDd2Nmp2Zml2cXRmdHFjMmYxbXE0b3UQAg", "prompt": "summarise the report"}}}, warden.Allow},
		} {
			out, err := b.g.Decide(ctx, c.ev)
			if err != nil || out.Verdict != c.want {
				t.Errorf("%s: %v (%s) %v, want %v", c.name, out.Verdict, out.Reason, err, c.want)
			}
			if c.want == warden.Deny && !strings.Contains(out.Reason, "(api_key)") {
				t.Errorf("%s: reason %q", c.name, out.Reason)
			}
		}
		for _, r := range b.records(t) {
			b, _ := json.Marshal(r)
			noSecret(t, "record "+r.ID, string(b))
			if r.Decision == "deny" && !bytes.Contains(r.Input, []byte("[REDACTED:api_key:")) {
				t.Errorf("record %s: input %s", r.ID, r.Input)
			}
		}
		b.get(t, "/api/runs")
		b.get(t, "/sessions/s2")
	})
}

// The reason an approver gives is stored, listed and shown redacted, as
// the approval's trace record has it.
func TestAttackApproverReasonRedacted(t *testing.T) {
	const ask = "id: ask-pay\nversion: \"1\"\nevents: [tool.pre_call]\nwhen: 'tool.name == \"pay\"'\ndecision: ask\nreason: payments need approval\n"
	forEachBackend(t, ask, func(t *testing.T, b *attackBackend) {
		ctx := context.Background()
		out, err := b.g.Decide(ctx, &warden.Event{Name: "tool.pre_call", Payload: map[string]any{
			"session_id": "s3", "tool_name": "pay", "tool_input": map[string]any{"amount": 5}}})
		if err != nil || out.Verdict != warden.Ask || out.ApprovalID == "" {
			t.Fatalf("%v %q %v", out.Verdict, out.ApprovalID, err)
		}
		reason := "ok — retry with key " + awsKey + " and token=" + fieldKey
		body, _ := json.Marshal(map[string]string{"decision": "approve", "reason": reason})
		req, _ := http.NewRequest(http.MethodPost, b.srv.URL+"/api/approvals/"+out.ApprovalID, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("decide: %d %s", resp.StatusCode, answer)
		}
		noSecret(t, "the decide answer", string(answer))
		a, err := b.g.Approvals().Get(ctx, out.ApprovalID, "")
		if err != nil {
			t.Fatal(err)
		}
		if a.State != approval.ApprovalApproved || !strings.HasPrefix(a.DecidedReason, "ok — retry with key [REDACTED:aws_access_key:") ||
			!strings.Contains(a.DecidedReason, "token=[REDACTED:api_key:") {
			t.Errorf("approval %s: %q", a.State, a.DecidedReason)
		}
		b.get(t, "/api/approvals")
		b.get(t, "/api/approvals/"+out.ApprovalID)
		b.get(t, "/approvals/"+out.ApprovalID)
		b.get(t, "/approvals")
		// The decision's trace record says the same.
		if a.DecisionRecordID == "" {
			t.Fatal("no decision record")
		}
		b.get(t, "/api/runs/"+a.DecisionRecordID)
	})
}

// The originals the redaction replaced are kept sealed, not in the clear:
// every secret of these steps is in a record's sealed values, opens with
// the KEK (which is outside the data directory), and is in no file of the
// data directory, no PostgreSQL table and no log (noSecretAtRest, after
// the Guardian is closed).
func TestAttackSealedOriginalsAtRest(t *testing.T) {
	forEachBackend(t, "", func(t *testing.T, b *attackBackend) {
		ctx := context.Background()
		for _, ev := range []*warden.Event{
			{Name: "tool.pre_call", Payload: map[string]any{"session_id": "s4", "tool_name": "http_post",
				"tool_input": map[string]any{"body": "key " + awsKey, "api_key": fieldKey}}},
			{Name: "tool.pre_call", Payload: map[string]any{"session_id": "s4", "tool_name": ghToken,
				"tool_input": map[string]any{"path": "/tmp/x"}}},
		} {
			if _, err := b.g.Decide(ctx, ev); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := os.Stat(b.kek); err != nil {
			t.Fatalf("the KEK file: %v", err)
		}
		if rel, err := filepath.Rel(b.dir, b.kek); err == nil && !strings.HasPrefix(rel, "..") {
			t.Fatalf("the KEK %s is inside the data directory", b.kek)
		}
		svc := b.g.Unseal()
		if svc == nil {
			t.Fatal("no unseal service: originals are not sealed")
		}
		found := map[string]bool{}
		for _, r := range b.records(t) {
			if r.Surface == unseal.Surface || len(r.Sealed) == 0 {
				continue
			}
			got, _, err := svc.Reveal(ctx, unseal.Viewer{Name: "test", Via: "test"}, &r)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(got)
			for _, s := range attackSecrets {
				if strings.Contains(string(raw), s) {
					found[s] = true
				}
			}
		}
		for _, s := range attackSecrets {
			if !found[s] {
				t.Errorf("the secret %s is in no record's sealed originals", s)
			}
		}
		b.get(t, "/api/runs")
		b.get(t, "/sessions/s4")
	})
}
