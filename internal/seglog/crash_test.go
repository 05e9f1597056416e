package seglog

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// crashState is a log directory as a crash left it: every file's bytes.
type crashState map[string][]byte

func snapshot(t *testing.T, dir string) crashState {
	t.Helper()
	s := crashState{}
	for _, p := range segFiles(t, dir) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s[filepath.Base(p)] = b
	}
	return s
}

// restore writes s into a fresh directory.
func (s crashState) restore(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp(t.TempDir(), "crash")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range s {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// checkRecovered reopens dir and checks that it holds exactly the records
// [first, want) (nothing of a torn batch), that appends continue after them
// and read back, and that a second reopen cuts nothing.
func checkRecovered(t *testing.T, dir string, o Options, first, want uint64, what string) {
	t.Helper()
	defer os.RemoveAll(dir)
	l, err := Open(dir, o)
	if err != nil {
		t.Fatalf("%s: Open: %v", what, err)
	}
	if l.Next() != want {
		t.Fatalf("%s: Next %d after recovery, want %d (cut %d bytes: %v)", what, l.Next(), want, l.Recovered().Cut, l.Recovered().Reason)
	}
	if got := readAll(t, l, first); got != want {
		t.Fatalf("%s: read up to %d, want %d", what, got, want)
	}
	end := appendN(t, l, 2, 1)
	if got := readAll(t, l, first); got != end {
		t.Fatalf("%s: after appending: read up to %d, want %d", what, got, end)
	}
	l.Close()
	l, err = Open(dir, o)
	if err != nil {
		t.Fatalf("%s: second Open: %v", what, err)
	}
	defer l.Close()
	if r := l.Recovered(); r.Cut != 0 || l.Next() != end {
		t.Fatalf("%s: second Open cut %d bytes (%v), Next %d, want %d", what, r.Cut, r.Reason, l.Next(), end)
	}
}

// TestCrashLastBatch writes batches, then cuts the last batch at every byte
// offset and flips every byte of it (one at a time): recovery keeps every
// earlier batch, never a part of the last one, and all of it only when it is
// complete and intact.
func TestCrashLastBatch(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  Options
		sizes []int // the last is the batch torn
	}{
		{"first segment", Options{Sync: SyncNone}, []int{3, 1, 5, 4}},
		{"single record batch", Options{Sync: SyncNone}, []int{2, 1}},
		{"only batch", Options{Sync: SyncNone}, []int{1}},
		{"later segment", Options{Sync: SyncNone, SegmentSize: MinSegmentSize}, []int{3, 3, 3, 3, 3, 3, 3, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l := mustOpen(t, dir, tc.opts)
			before := appendN(t, l, tc.sizes[:len(tc.sizes)-1]...)
			seg, start := segmentName(l.segs[len(l.segs)-1].first), l.size
			after := appendN(t, l, tc.sizes[len(tc.sizes)-1])
			if segmentName(l.segs[len(l.segs)-1].first) != seg {
				t.Fatal("the last batch rotated: pick other sizes")
			}
			end := l.size
			l.Close()
			full := snapshot(t, dir)
			step := int64(1)
			if testing.Short() { // every 13th offset, the last included
				step = 13
			}
			for cut := start; ; cut = min(cut+step, end) {
				s := crashState{}
				for k, v := range full {
					s[k] = v
				}
				s[seg] = full[seg][:cut]
				want := before
				if cut == end {
					want = after
				}
				checkRecovered(t, s.restore(t), tc.opts, 1, want, "cut at "+itoa(cut))
				if cut == end {
					break
				}
			}
			masks := []byte{0x01, 0x80, 0xff, 0x10}
			for off := start; off < end; off += step {
				s := crashState{}
				for k, v := range full {
					s[k] = v
				}
				b := append([]byte(nil), full[seg]...)
				b[off] ^= masks[off%int64(len(masks))]
				s[seg] = b
				checkRecovered(t, s.restore(t), tc.opts, 1, before, "flip at "+itoa(off))
			}
		})
	}
}

// TestCrashRotation crashes during a rotation: while writing the seal, while
// creating the next segment's header, and while writing the first batch
// there.
func TestCrashRotation(t *testing.T) {
	o := Options{Sync: SyncNone, SegmentSize: MinSegmentSize}
	dir := t.TempDir()
	l := mustOpen(t, dir, o)
	var before uint64
	for len(l.segs) == 1 {
		before = l.Next()
		appendN(t, l, 3)
	}
	after := l.Next()
	old, next := segmentName(l.segs[0].first), segmentName(l.segs[1].first)
	l.Close()
	full := snapshot(t, dir)
	sealEnd := int64(len(full[old]))
	sealStart := sealEnd - sealSize
	// While writing the seal: the next segment does not exist yet.
	for cut := sealStart; cut <= sealEnd; cut++ {
		s := crashState{old: full[old][:cut]}
		checkRecovered(t, s.restore(t), o, 1, before, "seal cut at "+itoa(cut))
	}
	// While creating the next segment (a torn header is made again).
	for cut := range int64(headerSize) {
		s := crashState{old: full[old], next: full[next][:cut]}
		checkRecovered(t, s.restore(t), o, 1, before, "header cut at "+itoa(cut))
	}
	// While writing the batch.
	for cut := int64(headerSize); cut <= int64(len(full[next])); cut++ {
		s := crashState{old: full[old], next: full[next][:cut]}
		want := before
		if cut == int64(len(full[next])) {
			want = after
		}
		checkRecovered(t, s.restore(t), o, 1, want, "batch cut at "+itoa(cut))
	}
}

// TestRecoveredReport: the cut is reported with its segment, offset, size
// and reason.
func TestRecoveredReport(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, Options{Sync: SyncNone})
	appendN(t, l, 2)
	good := l.size
	l.Close()
	p := filepath.Join(dir, segmentName(1))
	f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte{0xff, 0xff, 0xff, 0x3f, 1, 2, 3, 4, 5, 6, 7}) // a 1 GiB-1 length
	f.Close()
	l = mustOpen(t, dir, Options{Sync: SyncNone})
	defer l.Close()
	r := l.Recovered()
	want := "seglog: segment 0000000000000001.seg at offset " + itoa(good) + ": torn frame: 1073741823-byte payload runs past the end of the file (" + itoa(good+11) + ")"
	if r.Segment != segmentName(1) || r.Offset != good || r.Cut != 11 || r.Reason == nil || r.Reason.Error() != want {
		t.Fatalf("Recovered() = %+v\nwant reason %s", r, want)
	}
	if fi, _ := os.Stat(p); fi.Size() != good {
		t.Fatalf("file is %d bytes after the cut, want %d", fi.Size(), good)
	}
}

func itoa(n int64) string { return fmt.Sprint(n) }
