package guardian_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/backend"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/redact"
	"github.com/wardenhq/warden/seal"
	"github.com/wardenhq/warden/seal/sealtest"
	"github.com/wardenhq/warden/sqlite"
	"github.com/wardenhq/warden/storetest"
)

// brokenKeys is a key store that cannot be reached.
type brokenKeys struct{ sealtest.Mem }

var errUnreachable = errors.New("key store unreachable")

func (*brokenKeys) Live(context.Context, seal.KeyRef) (seal.WrappedKey, error) {
	return seal.WrappedKey{}, errUnreachable
}

// Originals that cannot be sealed do not refuse the step: the record is
// stored redacted, without them, and the failure is counted; with a
// working key store the same step's record carries them.
func TestSealFailureKeepsTheStep(t *testing.T) {
	for _, c := range []struct {
		name   string
		keys   seal.KeyStore
		sealed bool
	}{{"working", &sealtest.Mem{}, true}, {"unreachable", &brokenKeys{}, false}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			mem := storetest.NewMem()
			cfg := write(t, t.TempDir(), "warden.yaml", "trace:\n  seal:\n    kek_file: "+filepath.Join(t.TempDir(), "seal.kek")+"\n")
			g, err := guardian.Open(guardian.Options{ConfigFile: cfg,
				Backend: &backend.Backend{Name: "test", Trace: mem, Redact: true, Dir: dir, Seal: c.keys}})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close(context.Background())
			out, err := g.Decide(context.Background(), &warden.Event{Name: "tool.pre_call", Payload: map[string]any{
				"session_id": "s1", "tool_name": "http_post", "tool_input": map[string]any{"body": "key AKIAIOSFODNN7EXAMPLE"}}})
			if err != nil || out.Verdict != warden.Deny || out.RecordID == "" {
				t.Fatalf("%v %q %v", out.Verdict, out.Reason, err)
			}
			recs := mem.Records()
			if len(recs) != 1 || strings.Contains(string(recs[0].Input), "AKIA") {
				t.Fatalf("records %+v", recs)
			}
			if got := len(recs[0].Sealed) > 0; got != c.sealed {
				t.Errorf("sealed %v, want %v", got, c.sealed)
			}
			if n := g.SealFailures(); (n == 1) == c.sealed {
				t.Errorf("SealFailures %d", n)
			}
		})
	}
}

// Retention erases originals by destroying keys: a record from a period
// that ended longer ago than trace.seal.retention keeps its redacted form
// and its sealed bytes — the trace still verifies — but its originals no
// longer open, with the KEK; a recent record's still do.
func TestSealRetentionErasesOldOriginals(t *testing.T) {
	base := t.TempDir()
	t.Setenv("WARDEN_TRACE_KEY_FILE", filepath.Join(base, "trace.chain.key"))
	dir, kekFile := filepath.Join(base, "data"), filepath.Join(base, "seal.kek")
	ctx := context.Background()

	// Two records as a Guardian seals them: one from three days ago, one
	// from now.
	st, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := seal.CreateKEKFile(kekFile); err != nil {
		t.Fatal(err)
	}
	kek, err := seal.FileKEK(kekFile)
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := seal.New(seal.Options{KEK: kek, Store: st.SealKeys(), Granularity: seal.Day})
	if err != nil {
		t.Fatal(err)
	}
	key, err := redact.LoadKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	filter := redact.New(key).RecordFilter(sealer)
	var ids []string
	for _, at := range []time.Time{time.Now().Add(-72 * time.Hour), time.Now()} {
		rec := &audit.Record{ID: uuid.NewString(), Time: at.UTC(), Event: "tool.pre_call", Surface: "sdk", SessionID: "s1",
			Decision: "deny", Results: []warden.Result{}, Input: json.RawMessage(`{"to":"bob@external.example"}`)}
		if err := filter(ctx, rec); err != nil || len(rec.Sealed) == 0 {
			t.Fatalf("seal: %v", err)
		}
		if err := st.Record(ctx, rec); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.ID)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	// A Guardian with trace.seal.retention: 1d destroys the old period's
	// keys at start.
	cfg := write(t, base, "warden.yaml", "trace:\n  seal:\n    kek_file: "+kekFile+"\n    retention: 1d\n")
	g, err := guardian.Open(guardian.Options{ConfigFile: cfg, Data: dir})
	if err != nil {
		t.Fatal(err)
	}
	opened := func(id string) redact.Opened {
		t.Helper()
		recs, err := audit.Collect(ctx, g.Store(), audit.Query{ID: id}, 1)
		if err != nil || len(recs) != 1 {
			t.Fatalf("record %s: %v", id, err)
		}
		o, err := g.Unseal().Originals(ctx, &recs[0])
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	deadline := time.Now().Add(10 * time.Second)
	for opened(ids[0]).Erased == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the expired period's keys were not destroyed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if o := opened(ids[0]); len(o.Originals) != 0 || o.Erased != 1 {
		t.Errorf("old record after retention: %+v", o)
	}
	if o := opened(ids[1]); len(o.Originals) != 1 || o.Erased != 0 {
		t.Errorf("recent record: %+v", o)
	}
	if err := g.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st, err = sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rep, err := st.Verify(ctx)
	if err != nil || !rep.OK() || rep.Verified != 2 {
		t.Fatalf("verify after retention: %+v %v", rep, err)
	}
}
