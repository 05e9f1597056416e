package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden/storetest"
)

// The Store contract, with the trace log as each record's durable point.
func TestStoreLogged(t *testing.T) {
	storetest.Run(t, opener(Options{Log: true}))
}

func TestStoreLoggedFull(t *testing.T) {
	storetest.Run(t, opener(Options{Log: true, Synchronous: "full"}))
}

func TestStoreLoggedTinyQueue(t *testing.T) {
	storetest.Run(t, opener(Options{Log: true, MaxBatch: 1, QueueSize: 1}))
}

// A logged record comes back from the log as the writer would insert it.
func TestLoggedRoundTrip(t *testing.T) {
	r := requestPool.Get().(*request)
	defer putRequest(r)
	rec := testRecord("rt-1", time.Unix(1700000000, 123000))
	rec.ReasonCodes = []string{"x"}
	rec.Output = []byte(`{"tool":"ls"}`)
	if err := r.fill(rec); err != nil {
		t.Fatal(err)
	}
	q, err := decodeLogged(appendLogged(nil, r))
	if err != nil {
		t.Fatal(err)
	}
	if q.content != r.content || string(q.blob) != string(r.blob) {
		t.Fatalf("content or blob differ")
	}
	for i := range r.args {
		if !loggedArg(i) {
			continue
		}
		if !reflect.DeepEqual(q.args[i].Value, r.args[i].Value) {
			t.Errorf("arg %d: %#v, want %#v", i, q.args[i].Value, r.args[i].Value)
		}
	}
}

// FuzzDecodeLogged: a malformed log record is an error, never a panic.
func FuzzDecodeLogged(f *testing.F) {
	r := requestPool.Get().(*request)
	if err := r.fill(testRecord("fz-1", time.Unix(1700000000, 0))); err != nil {
		f.Fatal(err)
	}
	f.Add(appendLogged(nil, r))
	putRequest(r)
	f.Add([]byte{})
	f.Add(make([]byte, 40))
	f.Fuzz(func(t *testing.T, p []byte) {
		q, err := decodeLogged(p)
		if err != nil {
			return
		}
		// What decodes encodes back to the same bytes.
		for i := range q.args {
			if _, ok := q.args[i].Value.(driver.Value); !ok && q.args[i].Value != nil {
				t.Fatalf("arg %d: %T", i, q.args[i].Value)
			}
		}
		if got := appendLogged(nil, q); string(got) != string(p) {
			t.Fatalf("re-encoded %x, was %x", got, p)
		}
	})
}

// Records answered through the log are indexed behind the answers, read
// back by this Store at once, chained, and survive a reopen; the log is
// cut as they are indexed.
func TestLoggedIndexAndReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir, Options{Log: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		if err := s.Record(ctx, testRecord(strings.Repeat("a", 3)+string(rune('A'+i%26))+itoa(i), time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	got, err := audit.Collect(ctx, s, audit.Query{}, everything)
	if err != nil || len(got) != 500 {
		t.Fatalf("read back %d, %v", len(got), err)
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() || rep.Verified != 500 {
		t.Fatalf("verify %+v, %v", rep, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var indexed int64
	ro, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := ro.rdb.QueryRow(`SELECT indexed FROM trace_log`).Scan(&indexed); err != nil || indexed != 500 {
		t.Fatalf("trace_log.indexed %d, %v", indexed, err)
	}
	ro.Close()
	s = open(t, dir, Options{Log: true})
	if err := s.Record(ctx, testRecord("after", time.Now())); err != nil {
		t.Fatal(err)
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() || rep.Verified != 501 {
		t.Fatalf("verify after reopen %+v, %v", rep, err)
	}
	// The id check covers the rows and the records waiting for the indexer.
	if err := s.Record(ctx, testRecord("after", time.Now())); err == nil || !strings.Contains(err.Error(), "already in the trace") {
		t.Fatalf("duplicate id: %v", err)
	}
}

// A log that is not this trace's (it ends before the position the trace
// recorded) is refused, not appended to under old numbers.
func TestLoggedForeignLog(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir, Options{Log: true})
	for i := range 10 {
		if err := s.Record(ctx, testRecord("f"+itoa(i), time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if err := os.RemoveAll(filepath.Join(dir, LogDirName)); err != nil {
		t.Fatal(err)
	}
	// A removed log starts again after the trace's position: fine.
	s = open(t, dir, Options{Log: true})
	if err := s.Record(ctx, testRecord("g1", time.Now())); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", dsn(filepath.Join(dir, FileName)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE trace_log SET indexed = 100`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(dir, Options{Log: true})
	if err == nil || !strings.Contains(err.Error(), "ends at record 11 but the trace indexed it up to 100") {
		t.Fatalf("Open with a foreign log: %v", err)
	}
}

// TestKill9Logged: with the trace log, every record answered before a
// kill -9 is in the trace once the directory is opened again (its rows
// indexed from the log), and the chain verifies.
func TestKill9Logged(t *testing.T) {
	if dir := os.Getenv("WARDEN_SQLITE_KILL_CHILD"); dir != "" {
		killChild(dir, Options{Log: true})
		return
	}
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := t.TempDir()
	acked := kill9(t, "TestKill9Logged", dir)
	s := open(t, dir, Options{Log: true})
	checkAcked(t, s, acked)
	rep, err := s.Verify(context.Background())
	if err != nil || !rep.OK() {
		t.Fatalf("verify %+v, %v", rep, err)
	}
	t.Logf("verified %d records; %d of them indexed from the log at Open", rep.Verified, s.Stats().Replayed)
}

func itoa(i int) string {
	const digits = "0123456789"
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{digits[i%10]}, b...)
	}
	return string(b)
}
