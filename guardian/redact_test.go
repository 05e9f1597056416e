package guardian_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/redact"
	"github.com/wardenhq/warden/sqlite"
)

// With a data directory, records are redacted with the key in it unless
// trace.raw_input is set; the secret is in no file of the directory.
func TestDataTraceRedacted(t *testing.T) {
	for _, raw := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "raw_input"}[raw], func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			cfg := config.Default()
			cfg.Trace.RawInput = raw
			g, err := guardian.Open(guardian.Options{Config: cfg, Data: dir})
			if err != nil {
				t.Fatal(err)
			}
			out, err := g.Decide(context.Background(), &warden.Event{Name: "tool.pre_call", Payload: map[string]any{
				"session_id": "s9", "tool_name": "http_post", "tool_input": map[string]any{"body": "AKIAIOSFODNN7EXAMPLE"}}})
			if err != nil || out.Verdict != warden.Deny {
				t.Fatalf("%v %v", out.Verdict, err)
			}
			rs, err := audit.Collect(context.Background(), g.Store(), audit.Query{}, 10)
			if err != nil || len(rs) != 1 {
				t.Fatalf("%d records, %v", len(rs), err)
			}
			if err := g.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(rs[0])
			if got := strings.Contains(string(b), "AKIAIOSFODNN7EXAMPLE"); got != raw {
				t.Errorf("secret in the record: %v, want %v: %s", got, raw, b)
			}
			if !raw && !strings.Contains(string(rs[0].Input), "[REDACTED:aws_access_key:") {
				t.Errorf("input %s", rs[0].Input)
			}
			_, err = os.Stat(filepath.Join(dir, redact.KeyFileName))
			if raw != os.IsNotExist(err) {
				t.Errorf("key file: %v", err)
			}
			found := false
			filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
				if err == nil && fi.Mode().IsRegular() {
					if data, _ := os.ReadFile(p); strings.Contains(string(data), "AKIAIOSFODNN7EXAMPLE") {
						found = true
					}
				}
				return nil
			})
			if found != raw {
				t.Errorf("secret in the data directory: %v, want %v", found, raw)
			}
		})
	}
}

// trace.retention starts the store's pruning: an old record in a
// *sqlite.Store given to the Guardian is pruned by the first pass.
func TestRetentionFromConfig(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	st, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	old := &audit.Record{ID: "old", Time: time.Now().Add(-48 * time.Hour), Event: "tool.pre_call", Decision: "allow",
		Results: []warden.Result{}, Input: json.RawMessage(`{}`)}
	if err := st.Record(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("w.yaml", []byte("trace: {retention: 1d}\n"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := guardian.Open(guardian.Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(context.Background())
	deadline := time.Now().Add(10 * time.Second)
	for {
		rs, err := audit.Collect(context.Background(), st, audit.Query{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the old record was not pruned: %v", rs[0].ID)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
