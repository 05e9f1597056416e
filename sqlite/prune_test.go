package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
)

// bigRecord is a record with about 4 KiB of blob.
func bigRecord(id string, at time.Time) *audit.Record {
	r := testRecord(id, at)
	r.Input = json.RawMessage(`{"pad":"` + strings.Repeat("x", 4096) + `"}`)
	return r
}

func recordAll(t *testing.T, s *Store, rs ...*audit.Record) {
	t.Helper()
	for _, r := range rs {
		if err := s.Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
}

func ids(t *testing.T, s *Store) string {
	t.Helper()
	var out []string
	err := s.Scan(context.Background(), audit.Query{Oldest: true}, func(r *audit.Record) bool {
		if !json.Valid(r.Input) {
			t.Errorf("%s: input %q", r.ID, r.Input)
		}
		out = append(out, r.ID)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, ",")
}

// blocks is the disk space trace.blobs uses.
func blocks(t *testing.T, dir string) int64 {
	fi, err := os.Stat(filepath.Join(dir, BlobFileName))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Blocks * 512
}

func TestPruneAge(t *testing.T) {
	dir := privateDir(t)
	s := open(t, dir, Options{})
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range 10 {
		recordAll(t, s, bigRecord(fmt.Sprintf("r%d", i), t0.Add(time.Duration(i)*time.Hour)))
	}
	before := blocks(t, dir)
	now := t0.Add(12 * time.Hour) // r0..r6 are older than 5h; r7 (5h old) stays
	r := Retention{MaxAge: 5 * time.Hour, Batch: 3, Now: func() time.Time { return now }}
	st, err := s.Prune(context.Background(), r)
	if err != nil || st.Deleted != 7 || !st.Complete {
		t.Fatalf("%+v %v", st, err)
	}
	if got := ids(t, s); got != "r7,r8,r9" {
		t.Fatalf("left %s", got)
	}
	// The blob bytes are given back one pass late.
	st, err = s.Prune(context.Background(), r)
	if err != nil || st.Deleted != 0 || st.Punched == 0 {
		t.Fatalf("second pass %+v %v", st, err)
	}
	if after := blocks(t, dir); after > before-6*4096 {
		t.Errorf("blob file uses %d bytes, %d before pruning", after, before)
	}
	if got := ids(t, s); got != "r7,r8,r9" {
		t.Fatalf("left %s", got)
	}
	// New records go on after the holes and read back.
	recordAll(t, s, bigRecord("r10", now))
	if got := ids(t, s); got != "r7,r8,r9,r10" {
		t.Fatalf("left %s", got)
	}
	s.Close()
	s2, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got := ids(t, s2); got != "r7,r8,r9,r10" {
		t.Fatalf("reopened: %s", got)
	}
}

func TestPruneSize(t *testing.T) {
	dir := privateDir(t)
	s := open(t, dir, Options{})
	now := time.Now()
	for i := range 40 {
		recordAll(t, s, bigRecord(fmt.Sprintf("r%02d", i), now))
	}
	// An empty trace is 20 pages (160 KiB at 8 KiB): one per table and
	// index of schema 14.
	r := Retention{MaxSize: 184 << 10, Batch: 4}
	st, err := s.Prune(context.Background(), r)
	if err != nil || st.Size > r.MaxSize || st.Deleted == 0 {
		t.Fatalf("%+v %v", st, err)
	}
	left := strings.Split(ids(t, s), ",")
	if len(left) != 40-st.Deleted || left[len(left)-1] != "r39" || left[0] != fmt.Sprintf("r%02d", st.Deleted) {
		t.Fatalf("deleted %d, left %v", st.Deleted, left)
	}
	t.Logf("%+v", st)
}

// The background pruner runs while decisions are recorded and stops with
// Close.
func TestPruneBackground(t *testing.T) {
	dir := privateDir(t)
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	var errs []error
	if err := s.StartPruning(Retention{MaxAge: time.Hour, Interval: 5 * time.Millisecond, Batch: 7, Now: clock}, func(err error) { errs = append(errs, err) }); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		recordAll(t, s, bigRecord(fmt.Sprintf("old%d", i), now.Add(-2*time.Hour)))
	}
	waitFor(t, "old records pruned", func() bool { return ids(t, s) == "" })
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	recordAll(t, s, bigRecord("new", now))
	time.Sleep(30 * time.Millisecond)
	if got := ids(t, s); got != "new" {
		t.Fatalf("left %s", got)
	}
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v", d)
	}
	if len(errs) > 0 {
		t.Errorf("pruner errors: %v", errs)
	}
}

// Pruning many records, in small transactions of its own, keeps the
// writer's commits short: Record's worst latency during a large pass is
// logged (and bounded loosely, the machine may be shared).
func TestPruneDoesNotStall(t *testing.T) {
	if testing.Short() {
		t.Skip("records 20,000 records")
	}
	dir := privateDir(t)
	s := open(t, dir, Options{})
	old := time.Now().Add(-48 * time.Hour)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2500 {
				if err := s.Record(context.Background(), testRecord(fmt.Sprintf("old-%d-%d", w, i), old)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	stop := make(chan struct{})
	var worst time.Duration
	var n int
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			start := time.Now()
			if err := s.Record(context.Background(), testRecord(fmt.Sprintf("new-%d", n), time.Now())); err != nil {
				t.Error(err)
				return
			}
			worst = max(worst, time.Since(start))
			n++
		}
	}()
	start := time.Now()
	st, err := s.Prune(context.Background(), Retention{MaxAge: 24 * time.Hour})
	close(stop)
	wg.Wait()
	if err != nil || st.Deleted != 20000 {
		t.Fatalf("%+v %v", st, err)
	}
	t.Logf("pruned %d records in %v; meanwhile %d records, worst Record %v", st.Deleted, time.Since(start), n, worst)
	if worst > time.Second {
		t.Errorf("a Record waited %v during pruning", worst)
	}
}
