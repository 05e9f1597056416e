package guardian_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/backend"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/redact"
)

// sliceStore is a trace in a slice, with no other feature.
type sliceStore struct {
	mu   sync.Mutex
	recs []audit.Record
}

func (s *sliceStore) Record(_ context.Context, r *audit.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, *r)
	return nil
}

func (s *sliceStore) Scan(context.Context, audit.Query, func(*audit.Record) bool) error { return nil }
func (s *sliceStore) Close() error                                                      { return nil }

// fakePruner remembers the retention it was started with.
type fakePruner struct{ got []backend.Retention }

func (p *fakePruner) StartPruning(r backend.Retention, _ func(error)) error {
	p.got = append(p.got, r)
	return nil
}

// The Guardian follows a backend's capabilities, not its type: it starts
// the Pruner with the config's retention, redacts a Redact backend's
// records with the key in its Dir (or KeyDir without one), and leaves any
// other trace's records as they are.
func TestBackendCapabilities(t *testing.T) {
	const secret = "AKIAIOSFODNN7EXAMPLE"
	cfg, err := config.Parse("w.yaml", []byte("trace: {retention: 1d, max_size: 1MiB}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		redacted bool
		dir      bool // the backend has a directory of its own
		keyDir   bool // Options.KeyDir is set
		wantErr  string
	}{
		{name: "plain"},
		{name: "redact-dir", redacted: true, dir: true},
		{name: "redact-keydir", redacted: true, keyDir: true},
		{name: "redact-nokey", redacted: true, wantErr: "a fake trace is redacted with the key in a data directory's trace.key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, p := &sliceStore{}, &fakePruner{}
			b := &backend.Backend{Name: "fake", Trace: st, Pruner: p, Redact: tc.redacted}
			keyDir := ""
			if tc.dir {
				b.Dir = t.TempDir()
				keyDir = b.Dir
			}
			opts := guardian.Options{Config: cfg, Backend: b}
			if tc.keyDir {
				opts.KeyDir = filepath.Join(t.TempDir(), "keys")
				keyDir = opts.KeyDir
			}
			g, err := guardian.Open(opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Open = %v; want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := g.Decide(context.Background(), &warden.Event{Name: "tool.pre_call", Payload: map[string]any{
				"session_id": "s1", "tool_name": "http_post", "tool_input": map[string]any{"body": secret}}}); err != nil {
				t.Fatal(err)
			}
			if err := g.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			want := backend.Retention{MaxAge: 24 * time.Hour, MaxSize: 1 << 20}
			if len(p.got) != 1 || p.got[0] != want {
				t.Errorf("pruning started with %+v; want once with %+v", p.got, want)
			}
			if len(st.recs) != 1 {
				t.Fatalf("%d records", len(st.recs))
			}
			rec, _ := json.Marshal(st.recs[0])
			if got := strings.Contains(string(rec), secret); got == tc.redacted {
				t.Errorf("secret in the record: %v; want %v: %s", got, !tc.redacted, rec)
			}
			if keyDir != "" {
				if _, err := os.Stat(filepath.Join(keyDir, redact.KeyFileName)); err != nil {
					t.Errorf("the key: %v", err)
				}
			}
		})
	}
}
