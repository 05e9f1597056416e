package seglog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// payload is the deterministic record for seq: its length varies with seq
// (17 to 1016 bytes) so that frames do not line up.
func payload(seq uint64) []byte {
	head := fmt.Sprintf("record %d:", seq)
	n := 17 + int(seq*7919%1000)
	return []byte(head + strings.Repeat(string(rune('a'+seq%26)), max(0, n-len(head))))
}

// batch returns the payloads of n records from seq.
func batch(seq uint64, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = payload(seq + uint64(i))
	}
	return out
}

func mustOpen(t testing.TB, dir string, o Options) *Log {
	t.Helper()
	l, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// appendN appends batches of the given sizes and returns the next sequence.
func appendN(t testing.TB, l *Log, sizes ...int) uint64 {
	t.Helper()
	for _, n := range sizes {
		want := l.Next()
		first, err := l.Append(batch(want, n))
		if err != nil {
			t.Fatal(err)
		}
		if first != want {
			t.Fatalf("Append returned first %d, want %d", first, want)
		}
	}
	return l.Next()
}

// readAll reads from from to the durable end, checking every payload, and
// returns the sequence after the last record read.
func readAll(t testing.TB, l *Log, from uint64) uint64 {
	t.Helper()
	r, err := l.Reader(from)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := from
	for {
		seq, p, err := r.Next()
		if err == io.EOF {
			return want
		}
		if err != nil {
			t.Fatalf("Next after %d: %v", want, err)
		}
		if seq != want || !bytes.Equal(p, payload(seq)) {
			t.Fatalf("got record %d (%d bytes), want %d", seq, len(p), want)
		}
		want++
	}
}

func segFiles(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.seg"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestWriteReadRotateReopen(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     Options
		batches  []int
		minFiles int
	}{
		{"one record", Options{Sync: SyncNone}, []int{1}, 1},
		{"batches", Options{Sync: SyncNone}, []int{1, 8, 64, 3}, 1},
		{"synced", Options{}, []int{2, 5}, 1},
		{"rotating", Options{Sync: SyncNone, SegmentSize: MinSegmentSize}, []int{1, 2, 3, 1, 1, 4, 2, 1, 1, 1, 5, 3}, 4},
		{"rotating synced", Options{SegmentSize: MinSegmentSize}, []int{3, 3, 3, 3, 3, 3}, 3},
		{"first 1000", Options{Sync: SyncNone, First: 1000, SegmentSize: MinSegmentSize}, []int{4, 4, 4}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l := mustOpen(t, dir, tc.opts)
			start := l.Next()
			if want := max(tc.opts.First, 1); start != want {
				t.Fatalf("Next of an empty log = %d, want %d", start, want)
			}
			end := appendN(t, l, tc.batches...)
			total := 0
			for _, n := range tc.batches {
				total += n
			}
			if end-start != uint64(total) {
				t.Fatalf("Next = %d after %d records from %d", end, total, start)
			}
			for from := start; from <= end; from++ { // every starting point
				if got := readAll(t, l, from); got != end {
					t.Fatalf("from %d: read up to %d, want %d", from, got, end)
				}
			}
			files := segFiles(t, dir)
			if len(files) < tc.minFiles {
				t.Fatalf("%d segment files, want at least %d", len(files), tc.minFiles)
			}
			for _, p := range files {
				fi, _ := os.Stat(p)
				if seg := tc.opts.SegmentSize; seg > 0 && fi.Size() > seg {
					t.Errorf("%s has %d bytes, more than SegmentSize %d", p, fi.Size(), seg)
				}
				if fi.Mode().Perm() != 0o600 {
					t.Errorf("%s has mode %v", p, fi.Mode())
				}
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = mustOpen(t, dir, tc.opts)
			defer l.Close()
			if l.Next() != end || l.First() != start {
				t.Fatalf("reopened: First %d Next %d, want %d %d", l.First(), l.Next(), start, end)
			}
			if r := l.Recovered(); r.Cut != 0 {
				t.Fatalf("clean reopen cut %d bytes: %v", r.Cut, r.Reason)
			}
			end = appendN(t, l, tc.batches...)
			if got := readAll(t, l, start); got != end {
				t.Fatalf("after reopen and append: read up to %d, want %d", got, end)
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, Options{Sync: SyncNone, SegmentSize: MinSegmentSize})
	defer l.Close()
	end := appendN(t, l, 4, 4, 4, 4, 4, 4, 4, 4)
	files := segFiles(t, dir)
	if len(files) < 4 {
		t.Fatalf("%d segments, want at least 4", len(files))
	}
	firsts, _ := l.list()
	r, err := l.Reader(1) // a reader in the first segment keeps reading it
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		before    uint64
		removed   int
		wantFirst uint64
	}{
		{0, 0, 1},
		{firsts[1] - 1, 0, 1},         // the first segment still holds firsts[1]-1
		{firsts[1], 1, firsts[1]},     // all of it below: removed
		{firsts[3] + 1, 2, firsts[3]}, // two more
		{end + 100, len(firsts) - 4, firsts[len(firsts)-1]}, // never the active one
	} {
		n, err := l.Truncate(tc.before)
		if err != nil || n != tc.removed || l.First() != tc.wantFirst {
			t.Fatalf("Truncate(%d) = %d, %v; First %d; want %d removed, First %d", tc.before, n, err, l.First(), tc.removed, tc.wantFirst)
		}
	}
	if got := len(segFiles(t, dir)); got != 1 {
		t.Fatalf("%d segment files left, want 1", got)
	}
	if got := readAll(t, l, l.First()); got != end {
		t.Fatalf("read up to %d, want %d", got, end)
	}
	if _, err := l.Reader(1); !errors.Is(err, ErrRemoved) {
		t.Fatalf("Reader(1) after Truncate: %v, want ErrRemoved", err)
	}
	// The old reader finishes its (unlinked) segment, then finds the next removed.
	var err2 error
	for err2 == nil {
		_, _, err2 = r.Next()
	}
	if !errors.Is(err2, ErrRemoved) {
		t.Fatalf("old reader: %v, want ErrRemoved", err2)
	}
	r.Close()
	l.Close()
	l = mustOpen(t, dir, Options{Sync: SyncNone, SegmentSize: MinSegmentSize})
	if l.First() != firsts[len(firsts)-1] || l.Next() != end {
		t.Fatalf("reopened after Truncate: First %d Next %d", l.First(), l.Next())
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, Options{Sync: SyncNone, SegmentSize: MinSegmentSize, MaxRecord: 1000})
	appendN(t, l, 1)
	for _, tc := range []struct {
		name  string
		batch [][]byte
		want  string
	}{
		{"empty batch", nil, "seglog: empty batch"},
		{"record too big", [][]byte{{1}, make([]byte, 1001)}, "seglog: record 1 of the batch has 1001 bytes, more than MaxRecord (1000)"},
		{"batch too big", batch(1, 8), "more than a segment of 4096 holds (4060)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := l.Next()
			if _, err := l.Append(tc.batch); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Append: %v, want %q", err, tc.want)
			}
			if l.Next() != next {
				t.Fatalf("a refused batch moved Next from %d to %d", next, l.Next())
			}
		})
	}
	if _, err := Open(dir, Options{}); err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("second Open: %v", err)
	}
	if _, err := l.Reader(5); err == nil || !strings.Contains(err.Error(), "past the end") {
		t.Fatalf("Reader past the end: %v", err)
	}
	r, err := l.Reader(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(batch(2, 1)); err != ErrClosed {
		t.Fatalf("Append after Close: %v", err)
	}
	if _, _, err := r.Next(); err != ErrClosed {
		t.Fatalf("Next after Close: %v", err)
	}
	for _, o := range []Options{
		{SegmentSize: 100},
		{SegmentSize: 2 << 30},
		{MaxRecord: -1},
		{SegmentSize: MinSegmentSize, MaxRecord: MinSegmentSize},
		{Sync: 7},
	} {
		if _, err := Open(t.TempDir(), o); err == nil {
			t.Errorf("Open with %+v: no error", o)
		}
	}
}

// TestConcurrentReader follows the writer: every record is seen once, in
// order, complete (run with -race).
func TestConcurrentReader(t *testing.T) {
	l := mustOpen(t, t.TempDir(), Options{Sync: SyncNone, SegmentSize: 16 << 10})
	defer l.Close()
	const batches = 300
	r, err := l.Reader(1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var wg sync.WaitGroup
	done := make(chan uint64, 1)
	wg.Go(func() {
		for i := range batches {
			if _, err := l.Append(batch(l.Next(), 1+i%9)); err != nil {
				t.Error(err)
				break
			}
			if i%50 == 0 {
				l.Truncate(0) // removes nothing; exercises the lock
			}
		}
		done <- l.Next()
	})
	want, end := uint64(1), uint64(0)
	for end == 0 || want < end {
		seq, p, err := r.Next()
		if err == io.EOF {
			select {
			case end = <-done:
			default:
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if seq != want || !bytes.Equal(p, payload(seq)) {
			t.Fatalf("got %d, want %d", seq, want)
		}
		want++
	}
	wg.Wait()
}

// TestSealedCorruption: a corrupt frame in a sealed segment is an error of
// the Reader, never a cut; a damaged seal or header refuses Open.
func TestSealedCorruption(t *testing.T) {
	build := func(t *testing.T) (string, []uint64) {
		dir := t.TempDir()
		l := mustOpen(t, dir, Options{Sync: SyncNone, SegmentSize: MinSegmentSize})
		appendN(t, l, 3, 3, 3, 3, 3, 3)
		firsts, _ := l.list()
		l.Close()
		if len(firsts) < 2 {
			t.Fatal("no sealed segment")
		}
		return dir, firsts
	}
	flip := func(t *testing.T, p string, off int64) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if off < 0 {
			off += int64(len(b))
		}
		b[off] ^= 0x40
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		off     int64
		openErr string
		readErr string
	}{
		{"header magic", 0, "at offset 0: bad magic", ""},
		{"header crc", 17, "at offset 0: header CRC mismatch", ""},
		{"seal", -3, "no valid seal naming", ""},
		{"first frame length", headerSize, "", "at offset 20:"},
		{"first payload", headerSize + frameHeader + 2, "", "at offset 20: CRC mismatch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, firsts := build(t)
			flip(t, filepath.Join(dir, segmentName(firsts[0])), tc.off)
			l, err := Open(dir, Options{Sync: SyncNone, SegmentSize: MinSegmentSize})
			if tc.openErr != "" {
				if err == nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.openErr) {
					t.Fatalf("Open: %v, want %q", err, tc.openErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			r, err := l.Reader(1)
			if err == nil {
				for err == nil {
					var seq uint64
					var p []byte
					seq, p, err = r.Next()
					if err == nil && !bytes.Equal(p, payload(seq)) {
						t.Fatalf("record %d read back wrong", seq)
					}
				}
			}
			want := "seglog: segment " + segmentName(firsts[0]) + " " + tc.readErr
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), want) {
				t.Fatalf("read: %v, want %q", err, want)
			}
			if got := readAll(t, l, firsts[1]); got != l.Next() { // the later segments are fine
				t.Fatalf("from the second segment: read to %d, want %d", got, l.Next())
			}
		})
	}
}

func TestMissingSegment(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, Options{Sync: SyncNone, SegmentSize: MinSegmentSize})
	appendN(t, l, 3, 3, 3, 3, 3, 3, 3, 3, 3)
	firsts, _ := l.list()
	l.Close()
	if len(firsts) < 3 {
		t.Fatalf("%d segments", len(firsts))
	}
	os.Remove(filepath.Join(dir, segmentName(firsts[1])))
	_, err := Open(dir, Options{Sync: SyncNone, SegmentSize: MinSegmentSize})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "a segment is missing") {
		t.Fatalf("Open with a hole: %v", err)
	}
}

// TestAppendAllocs: steady-state Append and Reader.Next allocate nothing.
func TestAppendAllocs(t *testing.T) {
	for _, sync := range []Sync{SyncNone, SyncAlways} {
		l := mustOpen(t, t.TempDir(), Options{Sync: sync})
		b := batch(1, 8)
		appendN(t, l, 8) // grows the buffer
		if a := testing.AllocsPerRun(200, func() {
			if _, err := l.Append(b); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("Sync %d: %.1f allocations per Append of 8 records, want 0", sync, a)
		}
		r, err := l.Reader(1)
		if err != nil {
			t.Fatal(err)
		}
		r.Next()
		if a := testing.AllocsPerRun(500, func() {
			if _, _, err := r.Next(); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("%.1f allocations per Reader.Next, want 0", a)
		}
		r.Close()
		l.Close()
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, Options{Sync: SyncNone, SegmentSize: MinSegmentSize})
	appendN(t, l, 3, 3, 3, 3, 3, 3, 3)
	firsts, _ := l.list()
	if err := l.Check(); err != nil {
		t.Fatalf("Check of a good log: %v", err)
	}
	p := filepath.Join(dir, segmentName(firsts[0]))
	b, _ := os.ReadFile(p)
	b[headerSize+frameHeader+5] ^= 1 // the first record's payload
	os.WriteFile(p, b, 0o600)
	want := "seglog: segment " + segmentName(firsts[0]) + " at offset 20: CRC mismatch"
	if err := l.Check(); !errors.Is(err, ErrCorrupt) || err.Error() != want {
		t.Fatalf("Check: %v, want %s", err, want)
	}
	l.Close()
	if err := l.Check(); err != ErrClosed {
		t.Fatalf("Check after Close: %v", err)
	}
}
