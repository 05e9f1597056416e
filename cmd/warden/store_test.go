package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden/internal/pgtest"
	"github.com/wardenhq/warden/postgres"
)

// TestPostgresCLI: warden migrate, then two stores writing one database at
// once, then warden verify --store (ok, then naming an edited record) and
// warden runs --store.
func TestPostgresCLI(t *testing.T) {
	u := pgtest.SchemaURL(t)
	code, out, errOut := cli(t, "", "migrate", "--store", u)
	want := fmt.Sprintf("ok: migrated the schema from version 0 to %d\n", postgres.SchemaVersion)
	if code != exitOK || out != want {
		t.Fatalf("migrate: exit %d: %q %s (want %q)", code, out, errOut, want)
	}
	if code, out, _ = cli(t, "", "migrate", "--store", u); code != exitOK || !strings.Contains(out, "already current") {
		t.Fatalf("second migrate: exit %d: %s", code, out)
	}
	ctx := context.Background()
	var stores []*postgres.Store
	for range 2 {
		s, err := postgres.Open(ctx, u, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores = append(stores, s)
	}
	var wg sync.WaitGroup
	for i, s := range stores {
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range 25 {
					r := &audit.Record{ID: fmt.Sprintf("s%d-w%d-%02d", i, w, j), Time: time.Now(), Event: "steps/toolCallRequest",
						Surface: "aos", Decision: "allow", Input: []byte(`{"n":1}`)}
					if err := s.Record(ctx, r); err != nil {
						t.Error(err)
					}
				}
			}()
		}
	}
	wg.Wait()
	code, out, errOut = cli(t, "", "verify", "--store", u)
	if code != exitOK || !strings.HasPrefix(out, "ok: 400 records verified, head ") {
		t.Fatalf("verify: exit %d: %s %s", code, out, errOut)
	}
	code, out, errOut = cli(t, "", "runs", "--store", u, "--last", "3", "-o", "json")
	if code != exitOK || strings.Count(out, `"id"`) != 3 {
		t.Fatalf("runs: exit %d: %s %s", code, out, errOut)
	}
	pgtest.Exec(t, u, `UPDATE runs SET reason = 'tampered' WHERE id = 's1-w3-07'`)
	code, out, _ = cli(t, "", "verify", "--store", u)
	if code != exitError || !strings.HasPrefix(out, "BROKEN at record s1-w3-07 ") || !strings.Contains(out, ": edited: ") {
		t.Fatalf("verify after an edit: exit %d: %s", code, out)
	}
	code, out, _ = cli(t, "", "verify", "--store", u, "-o", "json")
	if code != exitError || !strings.Contains(out, `"id": "s1-w3-07"`) {
		t.Fatalf("verify -o json after an edit: exit %d: %s", code, out)
	}

	pgtest.Exec(t, u, `UPDATE warden_schema SET version = version + 5`)
	code, _, errOut = cli(t, "", "migrate", "--store", u)
	if code != exitError || !strings.Contains(errOut, "is newer than this warden supports") {
		t.Fatalf("migrate on a newer schema: exit %d: %s", code, errOut)
	}
	if code, _, errOut = cli(t, "", "runs", "--store", u); code != exitError || !strings.Contains(errOut, "is newer than this warden supports") {
		t.Fatalf("runs on a newer schema: exit %d: %s", code, errOut)
	}
}

func TestStoreFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"migrate"},
		{"migrate", "--store", "sqlite:///x"},
		{"verify", "--store", "http://x"},
		{"runs", "--store", "nope"},
	} {
		if code, _, errOut := cli(t, "", args...); code != exitError || errOut == "" {
			t.Errorf("%q: exit %d, %q", args, code, errOut)
		}
	}
}

// TestACSStdioStore: acs stdio opens the config's store: (PostgreSQL),
// migrating it, rather than the SQLite trace under --data.
func TestACSStdioStore(t *testing.T) {
	u := pgtest.SchemaURL(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "warden.yaml")
	if err := os.WriteFile(cfg, []byte("store: \""+u+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := cli(t, "", "acs", "stdio", "--config", cfg, "--data", filepath.Join(dir, "data"))
	if code != exitOK {
		t.Fatalf("acs stdio: exit %d: %s", code, errOut)
	}
	s, err := postgres.Open(context.Background(), u, postgres.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("the config's store was not migrated by acs stdio: %v", err)
	}
	s.Close()
	if _, err := os.Stat(filepath.Join(dir, "data", "trace.db")); err == nil {
		t.Errorf("acs stdio created a SQLite trace beside store:")
	}
}
