package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden/internal/tracesql"
)

// makeV1 creates a trace in dir as a warden with schema 1 wrote it: the
// schema-1 table and indexes, rows in its 20 columns, their results, input
// and output in trace.blobs. ids are recorded in order, one second apart.
func makeV1(t *testing.T, dir string, ids ...string) {
	t.Helper()
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, nil, 0o600); err != nil { // as an older warden made it
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := migrations[0](ctx, tx); err != nil {
		t.Fatal(err)
	}
	var blobs []byte
	for i, id := range ids {
		res, in, out := `[{"guardian":"policy","decision":"deny","mode":"enforce","latency_us":1}]`, `{"tool":"bash","i":`+fmt.Sprint(i)+`}`, ""
		if i%2 == 1 {
			out = `{"tool":"echo"}`
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO runs (id, time, event, surface,
			direction, request_id, agent_id, session_id, turn_id, step_id, decision,
			reason, reason_codes, policy_id, policy_version, latency_us, blob_off,
			results_len, input_len, output_len) VALUES (?, ?, 'e', 'aos', '', 'rq',
			'agent', ?, 't', 's', 'deny', 'r', '["c"]', 'p', 'v1', 5, ?, ?, ?, ?)`,
			id, base.Add(time.Duration(i)*time.Second).UnixMicro(), fmt.Sprint("sess-", i%2),
			len(blobs), len(res), len(in), len(out)); err != nil {
			t.Fatal(err)
		}
		blobs = append(blobs, res+in+out...)
	}
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = 1"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, BlobFileName), blobs, 0o600); err != nil {
		t.Fatal(err)
	}
}

var base = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func indexes(t *testing.T, s *Store) []string {
	t.Helper()
	rows, err := s.rdb.Query(`SELECT name || ':' || sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func TestMigrateFromSchema1(t *testing.T) {
	for _, tt := range []struct {
		name   string
		ids    []string
		unique bool
	}{
		{"unique ids", []string{"a", "b", "c", "d", "e"}, true},
		{"duplicate ids", []string{"a", "b", "a", "c"}, false},
		{"empty", nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := privateDir(t)
			makeV1(t, dir, tt.ids...)
			ctx := context.Background()
			// A reader cannot use schema 1; the server migrates it.
			if _, err := OpenReadOnly(dir); err == nil || !strings.Contains(err.Error(), "older") {
				t.Errorf("OpenReadOnly of schema 1: %v, want an 'older' error", err)
			}
			for round := 0; round < 2; round++ { // the second Open finds schema 2
				s := open(t, dir, Options{})
				var v int
				if err := s.rdb.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != schemaVersion {
					t.Fatalf("round %d: user_version = %d, %v; want %d", round, v, err, schemaVersion)
				}
				idx := indexes(t, s)
				wantIdx := []string{"runs_id:CREATE INDEX runs_id ON runs (id)", "runs_session:CREATE INDEX runs_session ON runs (session_id)"}
				if tt.unique {
					wantIdx[0] = "runs_id:CREATE UNIQUE INDEX runs_id ON runs (id)"
				}
				wantIdx = append(append(append(slices.Clone(acsIndexes), approvalIndexes...), wantIdx...), sealKeyIndexes...)
				if !slices.Equal(idx, wantIdx) {
					t.Errorf("round %d: indexes %q, want %q", round, idx, wantIdx)
				}
				got := scanAll(t, s, audit.Query{Oldest: true})
				if round == 0 {
					if g := idsOf(got); !slices.Equal(g, tt.ids) && len(tt.ids) > 0 {
						t.Fatalf("old records after migration: %q, want %q", g, tt.ids)
					}
					for i, r := range got {
						wantOut := ""
						if i%2 == 1 {
							wantOut = `{"tool":"echo"}`
						}
						if string(r.Input) != fmt.Sprintf(`{"tool":"bash","i":%d}`, i) || string(r.Output) != wantOut ||
							len(r.Views) != 0 || r.PolicyRevision != "" || len(r.Results) != 1 ||
							!slices.Equal(r.ReasonCodes, []string{"c"}) || !r.Time.Equal(base.Add(time.Duration(i)*time.Second)) {
							t.Errorf("old record %d read back as %+v", i, r)
						}
					}
					// New records go beside the old ones, with the new fields.
					nr := testRecord("new", base)
					nr.PolicyRevision, nr.Views = "rev", json.RawMessage(`{"tool":{}}`)
					if err := s.Record(ctx, nr); err != nil {
						t.Fatal(err)
					}
				}
				last, err := audit.Collect(ctx, s, audit.Query{}, 1)
				if err != nil || len(last) != 1 || last[0].ID != "new" || last[0].PolicyRevision != "rev" || string(last[0].Views) != `{"tool":{}}` {
					t.Errorf("round %d: newest = %+v, %v", round, last, err)
				}
				if len(tt.ids) > 0 {
					// Paging over the old records works; a duplicate id as
					// cursor means the later one.
					after := tt.ids[0]
					want := []string{}
					at := strings.LastIndex(strings.Join(tt.ids, ""), after) // ids are one letter
					want = append(want, tt.ids[at+1:]...)
					want = append(want, "new")
					if g := idsOf(scanAll(t, s, audit.Query{Oldest: true, After: after})); !slices.Equal(g, want) {
						t.Errorf("round %d: after %s: %q, want %q", round, after, g, want)
					}
					if g := idsOf(scanAll(t, s, audit.Query{Session: "sess-1"})); len(g) != len(tt.ids)/2 {
						t.Errorf("round %d: session filter: %q", round, g)
					}
				}
				s.Close()
			}
			r, err := OpenReadOnly(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if got := scanAll(t, r, audit.Query{}); len(got) != len(tt.ids)+1 {
				t.Errorf("read-only after migration: %d records, want %d", len(got), len(tt.ids)+1)
			}
		})
	}
}

func scanAll(t *testing.T, s *Store, q audit.Query) []audit.Record {
	t.Helper()
	got, err := audit.Collect(context.Background(), s, q, everything)
	if err != nil {
		t.Fatalf("Collect(%+v): %v", q, err)
	}
	return got
}

func idsOf(rs []audit.Record) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func TestDuplicateIDRejected(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	ctx := context.Background()
	if err := s.Record(ctx, testRecord("dup", base)); err != nil {
		t.Fatal(err)
	}
	err := s.Record(ctx, testRecord("dup", base))
	if err == nil || !strings.Contains(err.Error(), "rejected") {
		t.Errorf("second Record with the same id: %v, want it rejected", err)
	}
	if err := s.Record(ctx, testRecord("other", base)); err != nil {
		t.Errorf("the store still works: %v", err)
	}
	if got := idsOf(scanAll(t, s, audit.Query{Oldest: true})); !slices.Equal(got, []string{"dup", "other"}) {
		t.Errorf("records %q", got)
	}
}

// TestScanPlans checks that every shape of Scan query streams in rowid
// order (no sort of the matches before the first row) and finds its cursor
// and sessions by index.
func TestScanPlans(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	at := base
	for _, oldest := range []bool{false, true} {
		for _, q := range []audit.Query{
			{}, {Session: "s"}, {Event: "e", Decision: "deny"}, {Surface: "aos", Policy: "p", Agent: "a"},
			{Since: at}, {Until: at}, {Since: at, Until: at.Add(time.Hour)}, {Session: "s", Since: at},
		} {
			q.Oldest = oldest
			where, args := filters(q)
			for _, cursor := range []bool{false, true} {
				stmt, a := scanSQL+where, args
				cmp, order := "rowid < ?", " ORDER BY rowid DESC LIMIT ?"
				if oldest {
					cmp, order = "rowid > ?", " ORDER BY rowid ASC LIMIT ?"
				}
				if cursor {
					stmt += tracesql.And(where) + cmp
					a = append(slices.Clone(a), int64(1))
				}
				stmt += order
				a = append(slices.Clone(a), 10)
				plan := queryPlan(t, s, stmt, a)
				if strings.Contains(plan, "TEMP B-TREE") {
					t.Errorf("%+v cursor=%v sorts: %s", q, cursor, plan)
				}
				if q.Session != "" && !strings.Contains(plan, "runs_session") {
					t.Errorf("%+v cursor=%v does not use runs_session: %s", q, cursor, plan)
				}
			}
		}
	}
	if plan := queryPlan(t, s, `SELECT rowid FROM runs WHERE id = ? ORDER BY rowid DESC LIMIT 1`, []any{"x"}); !strings.Contains(plan, "runs_id") {
		t.Errorf("cursor lookup does not use runs_id: %s", plan)
	}
}

func queryPlan(t *testing.T, s *Store, stmt string, args []any) string {
	t.Helper()
	rows, err := s.rdb.Query("EXPLAIN QUERY PLAN "+stmt, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "; ")
}

// TestScanStreams checks that a Scan reads as it goes: stopping after one
// record of many reads one chunk, and a done context stops it between
// records.
func TestScanStreams(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	ctx := context.Background()
	for i := range 3000 {
		if err := s.Record(ctx, testRecord(fmt.Sprintf("r%04d", i), base)); err != nil {
			t.Fatal(err)
		}
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	n := 0
	if err := s.Scan(ctx, audit.Query{}, func(*audit.Record) bool { n++; return false }); err != nil || n != 1 {
		t.Fatalf("Scan: %v, %d records", err, n)
	}
	runtime.ReadMemStats(&ms1)
	if d := ms1.TotalAlloc - ms0.TotalAlloc; d > 256<<10 {
		t.Errorf("a scan stopped after one record allocated %d bytes", d)
	}
	cctx, cancel := context.WithCancel(ctx)
	n = 0
	err := s.Scan(cctx, audit.Query{Oldest: true}, func(*audit.Record) bool {
		n++
		if n == 2000 {
			cancel()
		}
		return true
	})
	if !errors.Is(err, context.Canceled) || n != 2000 {
		t.Errorf("Scan canceled at 2000: %v after %d records", err, n)
	}
}

// TestMigrateFromSchema2 upgrades a schema-2 trace in place: old records
// read back with no caller and tenant, new ones keep theirs.
func TestMigrateFromSchema2(t *testing.T) {
	dir := privateDir(t)
	makeV1(t, dir, "a", "b")
	db, err := sql.Open("sqlite", dsn(filepath.Join(dir, FileName)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := migrations[1](ctx, tx); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = 2"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := OpenReadOnly(dir); err == nil || !strings.Contains(err.Error(), "older") {
		t.Errorf("OpenReadOnly of schema 2: %v, want an 'older' error", err)
	}
	s := open(t, dir, Options{})
	var v int
	if err := s.rdb.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != schemaVersion {
		t.Fatalf("user_version = %d, %v; want %d", v, err, schemaVersion)
	}
	nr := testRecord("new", base)
	nr.Caller, nr.Tenant = "agents", "acme"
	if err := s.Record(ctx, nr); err != nil {
		t.Fatal(err)
	}
	got := scanAll(t, s, audit.Query{Oldest: true})
	if g := idsOf(got); !slices.Equal(g, []string{"a", "b", "new"}) {
		t.Fatalf("records %q", g)
	}
	for _, r := range got[:2] {
		if r.Caller != "" || r.Tenant != "" || string(r.Input) == "" {
			t.Errorf("old record %s: caller %q tenant %q input %s", r.ID, r.Caller, r.Tenant, r.Input)
		}
	}
	if r := got[2]; r.Caller != "agents" || r.Tenant != "acme" {
		t.Errorf("new record: caller %q tenant %q", r.Caller, r.Tenant)
	}
	s.Close()
}

// TestMigrateToolColumn upgrades a schema-3 trace in place: old records
// read back with no tool (and Query.Tool does not find them), new ones keep
// theirs and are found by it.
func TestMigrateToolColumn(t *testing.T) {
	dir := privateDir(t)
	makeV1(t, dir, "a", "b")
	db, err := sql.Open("sqlite", dsn(filepath.Join(dir, FileName)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[1:3] {
		if err := m(ctx, tx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = 3"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s := open(t, dir, Options{})
	nr := testRecord("new", base)
	nr.Tool = "bash"
	if err := s.Record(ctx, nr); err != nil {
		t.Fatal(err)
	}
	got := scanAll(t, s, audit.Query{Oldest: true})
	if g := idsOf(got); !slices.Equal(g, []string{"a", "b", "new"}) {
		t.Fatalf("records %q", g)
	}
	for _, r := range got[:2] {
		if r.Tool != "" {
			t.Errorf("old record %s: tool %q", r.ID, r.Tool)
		}
	}
	if g := idsOf(scanAll(t, s, audit.Query{Tool: "bash"})); !slices.Equal(g, []string{"new"}) {
		t.Errorf("Query{Tool: bash} = %q, want [new]", g)
	}
	// The old records' input still holds "bash": Text finds them.
	if g := idsOf(scanAll(t, s, audit.Query{Text: "BASH", Oldest: true})); !slices.Equal(g, []string{"a", "b", "new"}) {
		t.Errorf("Query{Text: BASH} = %q, want all three", g)
	}
	s.Close()
}
