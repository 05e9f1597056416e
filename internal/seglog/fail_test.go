package seglog

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestFailedWrite: a write that fails part way (disk full) is undone, the
// batch is not in the log, and the next Append succeeds.
func TestFailedWrite(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"always", Options{}},
		{"rotating", Options{SegmentSize: MinSegmentSize}}, // the seal's write fails
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l := mustOpen(t, dir, tc.opts)
			defer l.Close()
			appendN(t, l, 3, 2)
			if tc.opts.SegmentSize != 0 {
				for l.size+int64(len(payload(l.Next())))+2*frameHeader+sealSize <= tc.opts.SegmentSize {
					appendN(t, l, 1) // fill it: the next batch rotates
				}
			}
			next, size, nsegs := l.Next(), l.size, len(l.segs)
			var tried int
			l.writeAt = func(f *os.File, b []byte, off int64) (int, error) {
				tried = len(b)
				n, _ := f.WriteAt(b[:len(b)/2], off)
				return n, syscall.ENOSPC
			}
			_, err := l.Append(batch(next, 2))
			if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "seglog: writing segment ") {
				t.Fatalf("Append: %v, want ENOSPC", err)
			}
			if rotating := tc.opts.SegmentSize != 0; rotating != (tried == sealSize) {
				t.Fatalf("the failed write was of %d bytes (rotating: %v)", tried, rotating)
			}
			if fi, _ := os.Stat(l.f.Name()); fi.Size() != size || l.Next() != next || len(l.segs) != nsegs {
				t.Fatalf("after the failed write: file %d bytes (want %d), Next %d (want %d), %d segments (want %d)", fi.Size(), size, l.Next(), next, len(l.segs), nsegs)
			}
			l.writeAt = (*os.File).WriteAt
			end := appendN(t, l, 2, 1)
			if got := readAll(t, l, 1); got != end {
				t.Fatalf("read to %d, want %d", got, end)
			}
			l.Close()
			l = mustOpen(t, dir, tc.opts)
			if l.Next() != end || l.Recovered().Cut != 0 {
				t.Fatalf("reopened: Next %d (want %d), cut %d", l.Next(), end, l.Recovered().Cut)
			}
		})
	}
}

// TestFailedSync: after a failed fdatasync the log stops (every Append
// returns the error) and readers do not see the batch; reopened, the log
// holds the batch if its bytes are there.
func TestFailedSync(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, Options{})
	next := appendN(t, l, 3)
	l.datasync = func(*os.File) error { return syscall.EIO }
	if _, err := l.Append(batch(next, 2)); !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "stopped: fdatasync") {
		t.Fatalf("Append: %v, want EIO", err)
	}
	l.datasync = fdatasync
	if _, err := l.Append(batch(next, 1)); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Append after a failed sync: %v, want the same EIO", err)
	}
	if l.Next() != next || readAll(t, l, 1) != next {
		t.Fatalf("the unsynced batch is visible: Next %d, want %d", l.Next(), next)
	}
	l.Close()
	l = mustOpen(t, dir, Options{})
	defer l.Close()
	if got := readAll(t, l, 1); got != next+2 || l.Next() != next+2 {
		t.Fatalf("reopened: read to %d, Next %d, want %d (the batch's bytes were written)", got, l.Next(), next+2)
	}
}
