package guardian_test

import (
	"context"
	"strings"
	"testing"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/internal/pgtest"
	"github.com/wardenhq/warden/postgres"
)

// TestPostgresStore: with store: in the config, the Guardian opens the
// PostgreSQL store, records each decision there (redacted with the key in
// Data) and closes it.
func TestPostgresStore(t *testing.T) {
	u := pgtest.SchemaURL(t)
	cfg, err := config.Parse("warden.yaml", []byte("store: \""+u+"\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := guardian.Open(guardian.Options{Config: cfg, Data: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	const secret = "AKIAABCDEFGHIJKLMNOP"
	out, err := g.Decide(context.Background(), &warden.Event{Name: "steps/toolCallRequest", Surface: warden.SurfaceAOS,
		SessionID: "s1", RequestID: "1",
		Payload: map[string]any{"toolCallRequest": map[string]any{"name": "bash", "arguments": map[string]any{"command": "echo " + secret}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	st, err := postgres.Open(context.Background(), u, postgres.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs, err := audit.Collect(context.Background(), st, audit.Query{}, 10)
	if err != nil || len(recs) != 1 || recs[0].ID != out.RecordID {
		t.Fatalf("records %+v %v, want the decision %s", recs, err, out.RecordID)
	}
	if strings.Contains(string(recs[0].Input), secret) {
		t.Errorf("the PostgreSQL trace holds the secret unredacted: %s", recs[0].Input)
	}
	if rep, err := st.Verify(context.Background()); err != nil || !rep.OK() || rep.Verified != 1 {
		t.Fatalf("Verify: %+v %v", rep, err)
	}
	// A PostgreSQL Store given without a key directory, and without
	// trace.raw_input, is refused.
	if _, err := guardian.Open(guardian.Options{Config: cfg, Store: st}); err == nil || !strings.Contains(err.Error(), "trace.key") {
		t.Errorf("Open without Data: %v", err)
	}
	// Without Data nor Store there is no trace (warden check, eval).
	g, err = guardian.Open(guardian.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	g.Close(context.Background())
}
