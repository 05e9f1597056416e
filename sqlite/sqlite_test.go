package sqlite

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/storetest"
)

// everything is more records than any test stores.
const everything = 1 << 30

// opener returns a storetest open func: one directory per subtest, reopened
// when called again with the same t.
func opener(opts Options) func(t *testing.T) audit.Store {
	var mu sync.Mutex
	dirs := map[*testing.T]string{}
	return func(t *testing.T) audit.Store {
		mu.Lock()
		dir, ok := dirs[t]
		if !ok {
			dir = t.TempDir()
			dirs[t] = dir
		}
		mu.Unlock()
		s, err := Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
}

func TestStore(t *testing.T) {
	storetest.Run(t, opener(Options{}))
}

// TestStoreTinyQueue runs the contract with one-record batches and a
// one-slot queue, so Records constantly wait for room.
func TestStoreTinyQueue(t *testing.T) {
	storetest.Run(t, opener(Options{MaxBatch: 1, QueueSize: 1}))
}

func TestStoreSynchronousFull(t *testing.T) {
	storetest.Run(t, opener(Options{Synchronous: "full"}))
}

func testRecord(id string, at time.Time) *audit.Record {
	return &audit.Record{
		ID: id, Time: at, Event: "steps/toolCallRequest", Surface: "aos",
		RequestID: "req-" + id, AgentID: "agent", SessionID: "sess", Decision: "allow",
		Results: []warden.Result{{Guardian: "policy", Decision: "allow", Mode: "enforce", LatencyUS: 2}},
		Input:   json.RawMessage(`{"tool":"bash"}`),
	}
}

func open(t testing.TB, dir string, opts Options) *Store {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestOptionsAndPragmas(t *testing.T) {
	if _, err := Open(t.TempDir(), Options{Synchronous: "off"}); err == nil {
		t.Error(`Open with Synchronous "off" succeeded, want an error`)
	}
	for _, tt := range []struct {
		sync string
		want int
	}{{"", 1}, {"normal", 1}, {"NORMAL", 1}, {"full", 2}} {
		dir := filepath.Join(t.TempDir(), "a", "b")
		s := open(t, dir, Options{Synchronous: tt.sync})
		var got int
		if err := s.conn.QueryRowContext(context.Background(), "PRAGMA synchronous").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("Synchronous %q: PRAGMA synchronous = %d, want %d", tt.sync, got, tt.want)
		}
		var mode string
		if err := s.rdb.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if mode != "wal" {
			t.Errorf("journal_mode = %q, want wal", mode)
		}
		for _, p := range []struct {
			path string
			perm os.FileMode
		}{{dir, 0o700}, {filepath.Join(dir, FileName), 0o600}, {filepath.Join(dir, FileName+"-wal"), 0o600}, {filepath.Join(dir, FileName+"-shm"), 0o600}} {
			fi, err := os.Stat(p.path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != p.perm {
				t.Errorf("%s has mode %v, want %v", p.path, fi.Mode().Perm(), p.perm)
			}
		}
		if s.opts.MaxBatch != DefaultMaxBatch || cap(s.queue) != DefaultQueueSize {
			t.Errorf("defaults: MaxBatch %d, queue %d", s.opts.MaxBatch, cap(s.queue))
		}
	}
}

func TestSchemaVersion(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{})
	if err := s.Record(context.Background(), testRecord("a", time.Now())); err != nil {
		t.Fatal(err)
	}
	var v int
	if err := s.rdb.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v != schemaVersion || v < 1 {
		t.Errorf("user_version = %d, want %d", v, schemaVersion)
	}
	s.Close()
	// Reopening an up-to-date store keeps its data.
	s = open(t, dir, Options{})
	if got, _ := audit.Collect(context.Background(), s, audit.Query{}, 100); len(got) != 1 {
		t.Errorf("after reopen: %d records, want 1", len(got))
	}
	if _, err := s.conn.ExecContext(context.Background(), "PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(dir, Options{}); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("Open of a schema from the future: err = %v, want a 'newer' error", err)
	}
	if _, err := OpenReadOnly(dir); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("OpenReadOnly of a schema from the future: err = %v, want a 'newer' error", err)
	}
}

func TestRawJSONKeptVerbatim(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	r := testRecord("raw", time.Now())
	r.Input = json.RawMessage("{ \"b\" : 1.50,\n  \"a\":[ ] }")
	r.Output = json.RawMessage(`{"z":"\u00e9","a":1e3}`)
	r.Views = json.RawMessage(` {"tool" :{"name":"bash"} ,"n":1.0}`)
	if err := s.Record(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	got, err := audit.Collect(context.Background(), s, audit.Query{}, 100)
	if err != nil || len(got) != 1 {
		t.Fatalf("Collect: %v, %d records", err, len(got))
	}
	if string(got[0].Input) != string(r.Input) || string(got[0].Output) != string(r.Output) || string(got[0].Views) != string(r.Views) {
		t.Errorf("raw JSON changed:\n input %s\n want  %s\noutput %s\n want  %s\n views %s\n want  %s",
			got[0].Input, r.Input, got[0].Output, r.Output, got[0].Views, r.Views)
	}
}

func TestRecordValidation(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	if err := s.Record(context.Background(), &audit.Record{}); err == nil {
		t.Error("Record without id succeeded")
	}
	if err := s.Record(context.Background(), nil); err == nil {
		t.Error("Record(nil) succeeded")
	}
}

// TestBatching: concurrent Records share commits.
func TestBatching(t *testing.T) {
	var (
		mu       sync.Mutex
		sizes    []int
		batchErr error
	)
	s := open(t, t.TempDir(), Options{MaxBatch: 64, OnBatch: func(size int, dur time.Duration, err error) {
		mu.Lock()
		sizes = append(sizes, size)
		if err != nil {
			batchErr = err
		}
		mu.Unlock()
	}})
	const goroutines, each = 64, 50
	var wg sync.WaitGroup
	var failed atomic.Int32
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := s.Record(context.Background(), testRecord(fmt.Sprintf("g%02d-%02d", g, i), time.Now())); err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d Records failed", failed.Load())
	}
	st := s.Stats()
	mu.Lock()
	defer mu.Unlock()
	total, largest := 0, 0
	for _, n := range sizes {
		total += n
		largest = max(largest, n)
	}
	t.Logf("Stats %+v; %d batches, largest %d, mean %.1f", st, len(sizes), largest, float64(total)/float64(len(sizes)))
	if batchErr != nil {
		t.Errorf("OnBatch reported %v", batchErr)
	}
	if st.Records != goroutines*each || total != goroutines*each {
		t.Errorf("Stats.Records = %d, OnBatch total = %d, want %d", st.Records, total, goroutines*each)
	}
	if st.Batches != uint64(len(sizes)) || st.Errors != 0 || st.Failed != 0 {
		t.Errorf("Stats = %+v, OnBatch calls %d", st, len(sizes))
	}
	if largest <= 1 || st.Batches >= st.Records {
		t.Errorf("no group commit: largest batch %d, %d batches for %d records", largest, st.Batches, st.Records)
	}
	if largest > 64 {
		t.Errorf("largest batch %d exceeds MaxBatch 64", largest)
	}
	if st.LastBatch < 1 || st.LastBatch > 64 {
		t.Errorf("LastBatch = %d", st.LastBatch)
	}
}

// blockWriter takes the database's write lock from another connection, so
// the store's writer waits in BEGIN IMMEDIATE; release lets it go.
func blockWriter(t *testing.T, dir string) (release func()) {
	t.Helper()
	db, err := sql.Open("sqlite", dsn(filepath.Join(dir, FileName), "_pragma=busy_timeout(5000)"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	// A write makes the deferred transaction take the write lock.
	if _, err := tx.Exec("CREATE TABLE IF NOT EXISTS lock_holder (x)"); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			tx.Rollback()
			db.Close()
		})
	}
	t.Cleanup(release)
	return release
}

// TestQueueBoundedAndContext: with the writer stuck, the queue fills up,
// Record waits for room until its context ends, a queued Record gives up
// with its context, and neither is recorded; the Record the writer had
// already taken is answered truthfully.
func TestQueueBoundedAndContext(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{MaxBatch: 1, QueueSize: 2, BusyTimeout: 30 * time.Second})
	release := blockWriter(t, dir)

	ctx := context.Background()
	// First: taken by the writer, which then blocks on the lock.
	firstErr := make(chan error, 1)
	go func() { firstErr <- s.Record(ctx, testRecord("first", time.Now())) }()
	waitFor(t, "the writer to take the first record", func() bool { return s.nTaken.Load() == 1 })

	// Two more fill the queue; they give up after their timeout.
	var wg sync.WaitGroup
	queuedErrs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
			queuedErrs[i] = s.Record(c, testRecord(fmt.Sprintf("queued-%d", i), time.Now()))
		}()
	}
	waitFor(t, "the queue to fill", func() bool { return len(s.queue) == 2 })
	if st := s.Stats(); st.Queued != 2 {
		t.Errorf("Stats.Queued = %d, want 2", st.Queued)
	}
	// The queue is full: this one cannot even enqueue.
	c, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	start := time.Now()
	err := s.Record(c, testRecord("blocked", time.Now()))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Record on a full queue: err = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Record on a full queue took %v to honour its context", d)
	}
	if len(s.queue) > cap(s.queue) || cap(s.queue) != 2 {
		t.Errorf("queue %d/%d", len(s.queue), cap(s.queue))
	}
	wg.Wait()
	for i, err := range queuedErrs {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("queued Record %d: err = %v, want DeadlineExceeded", i, err)
		}
	}

	release()
	select {
	case err := <-firstErr:
		if err != nil {
			t.Errorf("first Record: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("first Record did not return after the lock was released")
	}
	if err := s.Record(ctx, testRecord("after", time.Now())); err != nil {
		t.Fatal(err)
	}
	got, err := audit.Collect(ctx, s, audit.Query{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	if strings.Join(ids, ",") != "after,first" {
		t.Errorf("stored %q, want [after first]: abandoned records must not be written", ids)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestDiskFull simulates a full disk with PRAGMA max_page_count: the
// batches that cannot be written fail every one of their Records with
// SQLITE_FULL, later batches succeed, and exactly the records whose Record
// returned nil are stored.
func TestDiskFull(t *testing.T) {
	var batchErrs atomic.Int32
	dir := t.TempDir()
	s := open(t, dir, Options{OnBatch: func(_ int, _ time.Duration, err error) {
		if err != nil {
			batchErrs.Add(1)
		}
	}})
	ctx := context.Background()
	big := json.RawMessage(`{"blob":"` + strings.Repeat("x", 8000) + `"}`)
	reason := strings.Repeat("r", 2000)

	var mu sync.Mutex
	answered := map[string]error{}
	recordAll := func(prefix string, n int) {
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := testRecord(fmt.Sprintf("%s-%03d", prefix, i), time.Now())
				r.Input = big
				r.Reason = reason // kept in the database itself (the input goes to the blob file)
				err := s.Record(ctx, r)
				mu.Lock()
				answered[r.ID] = err
				mu.Unlock()
			}()
		}
		wg.Wait()
	}

	recordAll("before", 5)
	var pages int
	if err := s.conn.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	// The writer is idle: cap the database at (about) its current size.
	if _, err := s.conn.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", pages)); err != nil {
		t.Fatal(err)
	}
	recordAll("full", 100)

	var fullErrs int
	for id, err := range answered {
		if strings.HasPrefix(id, "full-") && err != nil {
			fullErrs++
			if !strings.Contains(err.Error(), "full") {
				t.Errorf("Record(%s) = %q, want an error saying the database is full", id, err)
			}
		}
	}
	if fullErrs == 0 {
		t.Fatal("no Record failed although the database was full")
	}
	st := s.Stats()
	t.Logf("full database: %d of 100 Records failed; Stats %+v; e.g. %v", fullErrs, st, firstErr(answered))
	if st.Errors == 0 || st.Failed != uint64(fullErrs) || batchErrs.Load() != int32(st.Errors) {
		t.Errorf("Stats = %+v, OnBatch errors %d, want the %d failures counted", st, batchErrs.Load(), fullErrs)
	}

	// Room again: the next batches succeed on the same store.
	if _, err := s.conn.ExecContext(ctx, "PRAGMA max_page_count = 1073741823"); err != nil {
		t.Fatal(err)
	}
	recordAll("after", 20)
	for id, err := range answered {
		if strings.HasPrefix(id, "after-") && err != nil {
			t.Errorf("Record(%s) after space was freed: %v", id, err)
		}
	}
	s.Close()

	// Reopen: everything answered nil is there, nothing answered with an
	// error is.
	s = open(t, dir, Options{})
	got, err := audit.Collect(ctx, s, audit.Query{}, everything)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for _, r := range got {
		stored[r.ID] = true
	}
	for id, err := range answered {
		if err == nil && !stored[id] {
			t.Errorf("%s was answered as recorded but is missing", id)
		}
		if err != nil && stored[id] {
			t.Errorf("%s was answered with %q but is stored", id, err)
		}
	}
	if len(stored) != len(answered)-fullErrs {
		t.Errorf("%d stored, want %d", len(stored), len(answered)-fullErrs)
	}
}

func firstErr(m map[string]error) error {
	for _, err := range m {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestReadOnlyWhileWriting: `warden runs` reads the store while a server
// writes it.
func TestReadOnlyWhileWriting(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenReadOnly(dir); err == nil {
		t.Error("OpenReadOnly of an empty directory succeeded")
	}
	if _, err := OpenReadOnly(filepath.Join(dir, "missing")); err == nil {
		t.Error("OpenReadOnly of a missing directory succeeded")
	}
	w := open(t, dir, Options{})
	r, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Record(context.Background(), testRecord("x", time.Now())); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Record on a read-only store: %v, want ErrReadOnly", err)
	}

	ctx := context.Background()
	const writers, each = 8, 150
	var wg sync.WaitGroup
	var writeErrs atomic.Int32
	var acked atomic.Int64
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := w.Record(ctx, testRecord(fmt.Sprintf("w%d-%03d", g, i), time.Now())); err != nil {
					writeErrs.Add(1)
				} else {
					acked.Add(1)
				}
			}
		}()
	}
	writing := make(chan struct{})
	go func() { wg.Wait(); close(writing) }()

	reads, last := 0, 0
	for done := false; !done; {
		select {
		case <-writing:
			done = true
		default:
		}
		before := acked.Load()
		got, err := audit.Collect(ctx, r, audit.Query{}, everything)
		if err != nil {
			t.Fatalf("read-only Scan while writing: %v", err)
		}
		reads++
		if len(got) < last {
			t.Errorf("reader saw %d records after %d", len(got), last)
		}
		if int64(len(got)) < before {
			t.Errorf("reader saw %d records, but %d were acknowledged before the read", len(got), before)
		}
		last = len(got)
		time.Sleep(time.Millisecond)
	}
	if writeErrs.Load() != 0 {
		t.Fatalf("%d writes failed", writeErrs.Load())
	}
	got, err := audit.Collect(ctx, r, audit.Query{}, everything)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != writers*each {
		t.Errorf("reader sees %d records, want %d", len(got), writers*each)
	}
	t.Logf("%d reads during %d writes", reads, writers*each)

	// After the server stops (its WAL is checkpointed and removed), a
	// fresh read-only open still works.
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r2, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatalf("OpenReadOnly after the writer closed: %v", err)
	}
	defer r2.Close()
	if got, err := audit.Collect(ctx, r2, audit.Query{Session: "sess"}, 5); err != nil || len(got) != 5 {
		t.Errorf("Collect on a stopped store: %d records, %v", len(got), err)
	}
	// Reading while the read-only store is open does not stop a new
	// writer.
	w2 := open(t, dir, Options{})
	if err := w2.Record(ctx, testRecord("late", time.Now())); err != nil {
		t.Fatal(err)
	}
	if got, err := audit.Collect(ctx, r2, audit.Query{}, 1); err != nil || len(got) != 1 || got[0].ID != "late" {
		t.Errorf("reader does not see the new writer's record: %v %v", got, err)
	}
}

// TestKill9 checks §8 of the contract: a record whose Record returned nil
// is in the trace even if the process is killed right after. A child
// process records continuously and prints each acknowledged id; we SIGKILL
// it mid-stream and look for every printed id.
func TestKill9(t *testing.T) {
	if dir := os.Getenv("WARDEN_SQLITE_KILL_CHILD"); dir != "" {
		killChild(dir, Options{})
		return
	}
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := t.TempDir()
	acked := kill9(t, "TestKill9", dir)
	r, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	checkAcked(t, r, acked)
}

// kill9 runs test in a child process recording into dir from 16
// goroutines, kills it with SIGKILL once it acknowledged 2,000 records,
// and returns the ids it acknowledged.
func kill9(t *testing.T, test, dir string) map[string]bool {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), "WARDEN_SQLITE_KILL_CHILD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{}
	sc := bufio.NewScanner(out)
	for sc.Scan() && len(acked) < 2000 {
		if id, ok := strings.CutPrefix(sc.Text(), "ok "); ok {
			acked[id] = true
		}
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	for sc.Scan() { // acknowledgements printed before the kill landed
		if id, ok := strings.CutPrefix(sc.Text(), "ok "); ok {
			acked[id] = true
		}
	}
	_ = cmd.Wait()
	if len(acked) < 2000 {
		t.Fatalf("child acknowledged only %d records", len(acked))
	}
	return acked
}

// checkAcked fails unless every acknowledged record is in r.
func checkAcked(t *testing.T, r audit.Store, acked map[string]bool) {
	t.Helper()
	got, err := audit.Collect(context.Background(), r, audit.Query{}, everything)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for _, rec := range got {
		stored[rec.ID] = true
	}
	missing := 0
	for id := range acked {
		if !stored[id] {
			missing++
		}
	}
	t.Logf("killed after %d acknowledged records; %d stored", len(acked), len(stored))
	if missing > 0 {
		t.Errorf("%d acknowledged records are missing after kill -9", missing)
	}
}

// killChild records forever from 16 goroutines, printing "ok ID" after each
// Record returns nil.
func killChild(dir string, opts Options) {
	s, err := Open(dir, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var mu sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				id := fmt.Sprintf("k%02d-%06d", g, i)
				if err := s.Record(context.Background(), testRecord(id, time.Now())); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
				mu.Lock()
				fmt.Fprintf(w, "ok %s\n", id)
				w.Flush()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// TestDatabaseDeleted: SQLite keeps writing into a deleted (unlinked)
// database file without complaint; the store notices after the commit and
// fails the batch rather than acknowledge records nobody can read.
func TestDatabaseDeleted(t *testing.T) {
	for _, victim := range []string{FileName, FileName + "-wal"} {
		t.Run(victim, func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir, Options{})
			ctx := context.Background()
			if err := s.Record(ctx, testRecord("before", time.Now())); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(dir, victim)); err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{"after-1", "after-2"} {
				err := s.Record(ctx, testRecord(id, time.Now()))
				if err == nil || !strings.Contains(err.Error(), "gone") {
					t.Errorf("Record(%s) after %s was deleted: err = %v, want a 'gone' error", id, victim, err)
				}
			}
			if st := s.Stats(); st.Errors != 2 || st.Failed != 2 || st.Records != 1 {
				t.Errorf("Stats = %+v", st)
			}
		})
	}
}

// TestWALBounded: under sustained writes the WAL is checkpointed in the
// background (checkpoint.go) and restarts instead of growing with the data.
func TestWALBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes ~30 MB")
	}
	dir := t.TempDir()
	s := open(t, dir, Options{})
	var ps int
	if err := s.rdb.QueryRow("PRAGMA page_size").Scan(&ps); err != nil {
		t.Fatal(err)
	}
	if ps != pageSize {
		t.Errorf("page_size = %d, want %d", ps, pageSize)
	}
	input := json.RawMessage(`{"blob":"` + strings.Repeat("y", 1500) + `"}`)
	walSize := func() int64 {
		wal, err := os.Stat(filepath.Join(dir, FileName+"-wal"))
		if err != nil {
			t.Fatal(err)
		}
		return wal.Size()
	}
	// The WAL header's checkpoint sequence number (bytes 12–15, big
	// endian) goes up by one each time the WAL restarts from its
	// beginning: the direct evidence that it is reused, where the file's
	// size only shows its high-water mark (a round that happens to
	// checkpoint late raises it once, and it then stays).
	walRestarts := func() uint32 {
		f, err := os.Open(filepath.Join(dir, FileName+"-wal"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var hdr [32]byte
		if _, err := io.ReadFull(f, hdr[:]); err != nil {
			t.Fatal(err)
		}
		return binary.BigEndian.Uint32(hdr[12:16])
	}
	// Three rounds of sustained writes (~10 MB each), with a pause between
	// them like a real load's quieter moments: the background checkpoint
	// catches up, the writer tops it up, and the WAL restarts, so its size
	// follows the rate of writes, not the amount of data.
	const goroutines, each, rounds = 16, 350, 3
	var sizes []int64
	var restarts []uint32
	for round := range rounds {
		var wg sync.WaitGroup
		var failed atomic.Int32
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					r := testRecord(fmt.Sprintf("wal-%d-%02d-%04d", round, g, i), time.Now())
					r.Input = input
					if err := s.Record(context.Background(), r); err != nil {
						failed.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		if failed.Load() > 0 {
			t.Fatalf("%d Records failed", failed.Load())
		}
		sizes = append(sizes, walSize())
		restarts = append(restarts, walRestarts())
		time.Sleep(3 * checkpointEvery)
	}
	db, err := os.Stat(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("db %d MB, WAL after each round %v bytes, its checkpoint sequence %v; %+v", db.Size()>>20, sizes, restarts, s.Stats())
	// Each round restarted the WAL at least once: its size follows the
	// rate of writes, not the amount of data. (A WAL that never restarts
	// keeps its sequence number and grows by a round's data each round.)
	for i := 1; i < rounds; i++ {
		if restarts[i] == restarts[i-1] {
			t.Errorf("round %d did not restart the WAL (checkpoint sequence %v, sizes %v bytes)", i+1, restarts, sizes)
		}
	}
	if last := sizes[rounds-1]; last > int64(hardCapFrames)*int64(ps) {
		t.Errorf("WAL is %d bytes, over the hard cap of %d frames", last, hardCapFrames)
	}
}

// Readers map the database (readerMmap).
func TestReadersMapTheDatabase(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{})
	r, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for name, db := range map[string]*sql.DB{"reader": s.rdb, "read-only store": r.rdb} {
		var n int64
		if err := db.QueryRow("PRAGMA mmap_size").Scan(&n); err != nil || n <= 0 {
			t.Errorf("%s: mmap_size = %d, %v; want > 0", name, n, err)
		}
	}
}

// TestPointReadsDoNotMap: a decision's point reads (an ACS session, a
// session's labels) go through connections that do not map the database
// (each read after a commit would unmap and fault it back in), and they
// still see what was just written.
func TestPointReadsDoNotMap(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	ctx := context.Background()
	if s.pointReader() != s.pdb || s.pdb == nil {
		t.Fatal("the store's point reads do not go through pdb")
	}
	if err := s.PutACSSession(ctx, testACSSession("s1")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddSessionLabels(ctx, "t", "s1", []string{"pii"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if n := s.pdb.Stats().OpenConnections; n != 0 {
		t.Fatalf("pdb has %d connections before any point read", n)
	}
	if got, err := s.ACSSession(ctx, "s1"); err != nil || got.ID != "s1" {
		t.Fatalf("ACSSession: %+v, %v", got, err)
	}
	if got, err := s.SessionLabels(ctx, "t", "s1"); err != nil || len(got) != 1 {
		t.Fatalf("SessionLabels: %v, %v", got, err)
	}
	if n := s.pdb.Stats().OpenConnections; n == 0 {
		t.Error("ACSSession and SessionLabels did not read through pdb")
	}
	var n int64
	if err := s.pdb.QueryRow("PRAGMA mmap_size").Scan(&n); err != nil || n != 0 {
		t.Errorf("point reads: mmap_size = %d, %v; want 0", n, err)
	}
}

// TestCheckpointerSeesEveryConnection: the background checkpointer skips a
// tick only when nothing was committed since a checkpoint that finished,
// and it learns of commits from any connection (PRAGMA data_version), not
// only the trace writer's: session labels, written on the approvals
// connection while no record is written, are still copied into the
// database, and an idle store's checkpoint stays finished.
func TestCheckpointerSeesEveryConnection(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	ctx := context.Background()
	// settled waits until the checkpointer has run since r0 (the run
	// counter before the writes) and then stopped running for 5 ticks
	// with the WAL wholly copied: a tick skips only when data_version has
	// not moved since the last run, so every write was seen by a run.
	settled := func(what string, r0 uint64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			r := s.ckpt.runs.Load()
			time.Sleep(5 * checkpointEvery)
			log, done := s.ckpt.logFrames.Load(), s.ckpt.doneFrames.Load()
			if r > r0 && s.ckpt.runs.Load() == r && log > 0 && log == done {
				return
			}
		}
		t.Fatalf("%s: not checkpointed, or checkpoints never stop: %d of %d WAL frames copied, %d checkpoints run", what, s.ckpt.doneFrames.Load(), s.ckpt.logFrames.Load(), s.ckpt.runs.Load()-r0)
	}
	r0 := s.ckpt.runs.Load()
	if err := s.Record(ctx, testRecord("ckpt-0", time.Now())); err != nil {
		t.Fatal(err)
	}
	settled("a record", r0)
	// Writes on the approvals connection only, the trace writer idle.
	r0 = s.ckpt.runs.Load()
	for i := range 50 {
		if _, err := s.AddSessionLabels(ctx, "", fmt.Sprintf("sess-%d", i), []string{"untrusted_input"}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	settled("labels written on the approvals connection", r0)
}
