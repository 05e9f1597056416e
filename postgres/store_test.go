package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden/storetest"
)

// TestStore runs the audit.Store contract on PostgreSQL, each subtest in
// its own schema.
func TestStore(t *testing.T) {
	testBaseURL(t)
	urls := map[*testing.T]string{}
	var mu sync.Mutex
	storetest.Run(t, func(t *testing.T) audit.Store {
		mu.Lock()
		u, ok := urls[t]
		if !ok {
			u = testSchemaURL(t)
			urls[t] = u
		}
		mu.Unlock()
		return openTest(t, u, Options{})
	})
}

// TestTwoWriters records from two Stores on one schema at once: every
// record is stored once, seqs are one order, and the chain verifies.
func TestTwoWriters(t *testing.T) {
	u := testSchemaURL(t)
	a, b := openTest(t, u, Options{}), openTest(t, u, Options{})
	const perStore, workers = 300, 16
	var wg sync.WaitGroup
	errs := make(chan error, 2*perStore)
	for si, s := range []*Store{a, b} {
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < perStore; i += workers {
					r := &audit.Record{ID: fmt.Sprintf("s%d-%04d", si, i), Time: time.Now(), Event: "PreToolUse",
						Decision: "allow", Input: []byte(`{"i":1}`)}
					if err := s.Record(context.Background(), r); err != nil {
						errs <- err
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Record: %v", err)
	}
	got, err := audit.Collect(context.Background(), a, audit.Query{Oldest: true}, 10*perStore)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2*perStore {
		t.Fatalf("stored %d records, want %d", len(got), 2*perStore)
	}
	for i := 1; i < len(got); i++ {
		if got[i].PrevHash != got[i-1].Hash {
			t.Fatalf("record %d (%s) prev_hash %s, want the previous hash %s", i, got[i].ID, got[i].PrevHash, got[i-1].Hash)
		}
	}
	rep, err := a.Verify(context.Background())
	if err != nil || !rep.OK() || rep.Verified != 2*perStore {
		t.Fatalf("Verify = %+v, %v; want %d verified", rep, err, 2*perStore)
	}
}

// TestVerifyDetects edits, deletes and reorders rows and checks that Verify
// names the first broken record.
func TestVerifyDetects(t *testing.T) {
	for _, tt := range []struct {
		name, sql, wantID, reason string
	}{
		{"intact", ``, "", ""},
		{"edited field", `UPDATE runs SET decision = 'allow' WHERE id = 'r05'`, "r05", BrokenEdited},
		{"edited input", `UPDATE runs SET input = '{"x":2}' WHERE id = 'r03'`, "r03", BrokenEdited},
		{"edited hash", `UPDATE runs SET hash = sha256(hash) WHERE id = 'r07'`, "r07", BrokenEdited},
		{"deleted", `DELETE FROM runs WHERE id = 'r04'`, "r05", BrokenMissing},
		{"deleted first", `DELETE FROM runs WHERE id = 'r00'`, "r01", BrokenMissing},
		{"reordered", `UPDATE runs SET seq = -seq WHERE id IN ('r02', 'r03');
			UPDATE runs SET seq = CASE id WHEN 'r02' THEN 4 ELSE 3 END WHERE id IN ('r02', 'r03')`, "r03", BrokenReordered},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := testSchemaURL(t)
			s := openTest(t, u, Options{})
			for i := range 10 {
				r := &audit.Record{ID: fmt.Sprintf("r%02d", i), Time: time.Now(), Decision: "deny", Input: []byte(`{"x":1}`)}
				if err := s.Record(context.Background(), r); err != nil {
					t.Fatal(err)
				}
			}
			if tt.sql != "" {
				if _, err := s.pool.Exec(context.Background(), tt.sql); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := s.Verify(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantID == "" {
				if !rep.OK() || rep.Verified != 10 || rep.Head == "" {
					t.Fatalf("intact chain: %+v", rep)
				}
				return
			}
			if rep.OK() || rep.Broken.ID != tt.wantID || rep.Broken.Reason != tt.reason {
				t.Fatalf("Verify = %+v (broken %+v), want %s %s", rep, rep.Broken, tt.wantID, tt.reason)
			}
		})
	}
}

// TestMigrateNewer refuses a database whose schema is newer than this
// binary's, naming both versions.
func TestMigrateNewer(t *testing.T) {
	u := testSchemaURL(t)
	s := openTest(t, u, Options{})
	if _, err := s.pool.Exec(context.Background(), `UPDATE warden_schema SET version = version + 1`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, noMigrate := range []bool{false, true} {
		_, err := Open(context.Background(), u, Options{NoMigrate: noMigrate})
		var tooNew *SchemaTooNewError
		if !errors.As(err, &tooNew) || !errors.Is(err, ErrSchemaTooNew) || tooNew.Have != SchemaVersion+1 || tooNew.Known != SchemaVersion {
			t.Fatalf("Open(NoMigrate=%v) on a newer schema: %v", noMigrate, err)
		}
		want := fmt.Sprintf("postgres: schema version %d is newer than this warden supports (%d): upgrade warden", SchemaVersion+1, SchemaVersion)
		if err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
	}
}

// TestMigrateConcurrent runs migrations from several goroutines at once on
// an empty schema: all succeed, the schema is migrated once.
func TestMigrateConcurrent(t *testing.T) {
	u := testSchemaURL(t)
	const n = 8
	var wg sync.WaitGroup
	froms := make([]int, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(context.Background(), u, Options{})
			if err != nil {
				errs[i] = err
				return
			}
			defer s.Close()
			froms[i], errs[i] = Migrate(context.Background(), s.pool)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("migrate %d: %v", i, err)
		}
		if froms[i] != SchemaVersion {
			t.Errorf("second Migrate %d found version %d, want %d", i, froms[i], SchemaVersion)
		}
	}
	s := openTest(t, u, Options{NoMigrate: true})
	var v int
	if err := s.pool.QueryRow(context.Background(), `SELECT version FROM warden_schema`).Scan(&v); err != nil || v != SchemaVersion {
		t.Fatalf("version %d, %v", v, err)
	}
}

// TestNoMigrateOnEmpty refuses to open an unmigrated database without
// migrating.
func TestNoMigrateOnEmpty(t *testing.T) {
	u := testSchemaURL(t)
	if _, err := Open(context.Background(), u, Options{NoMigrate: true}); err == nil {
		t.Fatal("Open(NoMigrate) on an empty schema succeeded")
	}
}

// TestOpenErrors: bad URLs fail with precise errors, never leaking a
// password.
func TestOpenErrors(t *testing.T) {
	for _, u := range []string{"", "sqlite:///x", "http://x"} {
		if _, err := Open(context.Background(), u, Options{}); err == nil {
			t.Errorf("Open(%q) succeeded", u)
		}
	}
	start := time.Now()
	_, err := Open(context.Background(), "postgres://u:secret@127.0.0.1:1/db?sslmode=disable", Options{Timeout: 500 * time.Millisecond})
	if err == nil {
		t.Fatal("Open on a closed port succeeded")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Open took %v", d)
	}
	if s := err.Error(); strings.Contains(s, "secret") {
		t.Errorf("error leaks the password: %s", s)
	}
}

// TestRedactURL keeps passwords out of messages.
func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:pw@h/db":          "postgres://u:xxxxx@h/db",
		"postgres://u@h/db":             "postgres://u@h/db",
		"postgresql://h/db?sslmode=off": "postgresql://h/db?sslmode=off",
		"postgres://u:p@ss@h/db":        "postgres://u:xxxxx@h/db",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestBigRecords: records whose blobs exceed inlineBlobs are read alone,
// round-trip whole, and Text finds what is in their input.
func TestBigRecords(t *testing.T) {
	s := openTest(t, testSchemaURL(t), Options{})
	ctx := context.Background()
	big := `{"data":"` + strings.Repeat("x", 3*inlineBlobs) + `needle"}`
	for i, in := range []string{`{"small":1}`, big, `{"small":"needle"}`, big} {
		r := &audit.Record{ID: fmt.Sprintf("r%d", i), Time: time.Now(), Decision: "allow", Input: []byte(in),
			Output: []byte(`{"o":1}`), Views: []byte(`{"v":1}`)}
		if err := s.Record(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	all, err := audit.Collect(ctx, s, audit.Query{Oldest: true}, 10)
	if err != nil || len(all) != 4 {
		t.Fatalf("%d records, %v", len(all), err)
	}
	if string(all[1].Input) != big || string(all[3].Input) != big || string(all[1].Output) != `{"o":1}` || string(all[3].Views) != `{"v":1}` {
		t.Errorf("a big record did not round-trip")
	}
	var ids []string
	err = s.Scan(ctx, audit.Query{Text: "NEEDLE", Oldest: true}, func(r *audit.Record) bool {
		ids = append(ids, r.ID)
		if r.ID == "r1" && string(r.Input) != big {
			t.Errorf("r1 found by Text without its whole input")
		}
		return true
	})
	if err != nil || strings.Join(ids, ",") != "r1,r2,r3" {
		t.Errorf("Text scan = %v, %v; want r1,r2,r3", ids, err)
	}
}

// TestOnBatch: OnBatch sees every transaction, and TraceStats counts them.
func TestOnBatch(t *testing.T) {
	var mu sync.Mutex
	sizes := 0
	s := openTest(t, testSchemaURL(t), Options{OnBatch: func(n int, d time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			sizes += n
		}
	}})
	for i := range 5 {
		if err := s.Record(context.Background(), &audit.Record{ID: fmt.Sprintf("r%d", i), Time: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	// A duplicate fails alone; its batch commits.
	if err := s.Record(context.Background(), &audit.Record{ID: "r1", Time: time.Now()}); err == nil || !strings.Contains(err.Error(), "already in the trace") {
		t.Errorf("duplicate id: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	st := s.TraceStats()
	if sizes != 6 || st.Records != 5 || st.Batches < 1 || st.Errors != 0 {
		t.Errorf("OnBatch saw %d records, stats %+v; want 6 and 5 stored", sizes, st)
	}
}

// TestServerCost: the two settings that halve the server's CPU per record
// under load (docs/postgres.md): runs' JSON columns compressed with lz4
// where the server has it (schema 4), and generic plans for warden's
// prepared statements unless the URL says otherwise.
func TestServerCost(t *testing.T) {
	ctx := context.Background()
	u := testSchemaURL(t)
	s := openTest(t, u, Options{})
	var lz4 bool
	if err := s.pool.QueryRow(ctx, `SELECT current_setting('server_version_num')::int >= 140000
		AND EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals))`).Scan(&lz4); err != nil {
		t.Fatal(err)
	}
	rows, err := s.pool.Query(ctx, `SELECT attname, attcompression::text FROM pg_attribute
		WHERE attrelid = 'runs'::regclass AND attname IN ('results', 'input', 'output', 'views') ORDER BY attname`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for rows.Next() {
		var name, c string
		if err := rows.Scan(&name, &c); err != nil {
			t.Fatal(err)
		}
		got[name] = c
	}
	if rows.Err() != nil || len(got) != 4 {
		t.Fatalf("columns %v, %v", got, rows.Err())
	}
	for name, c := range got {
		if want := map[bool]string{true: "l", false: ""}[lz4]; c != want {
			t.Errorf("runs.%s compression %q, want %q (server has lz4: %v)", name, c, want, lz4)
		}
	}
	var opts []string
	if err := s.pool.QueryRow(ctx, `SELECT coalesce(reloptions, '{}') FROM pg_class WHERE oid = 'runs'::regclass`).Scan(&opts); err != nil ||
		len(opts) != 1 || opts[0] != "toast_tuple_target=8160" {
		t.Fatalf("runs' options %q, %v", opts, err)
	}
	var mode string
	if err := s.pool.QueryRow(ctx, `SHOW plan_cache_mode`).Scan(&mode); err != nil || mode != "force_generic_plan" {
		t.Fatalf("plan_cache_mode %q, %v", mode, err)
	}
	s2 := openTest(t, withParam(u, "plan_cache_mode", "auto"), Options{})
	if err := s2.pool.QueryRow(ctx, `SHOW plan_cache_mode`).Scan(&mode); err != nil || mode != "auto" {
		t.Fatalf("plan_cache_mode with the URL's auto: %q, %v", mode, err)
	}
}
