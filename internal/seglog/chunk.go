package seglog

import (
	"fmt"
	"io"
	"os"
)

// chunkReader reads a segment file with pread(2) through one reused
// buffer, in chunks of at least chunkSize bytes but never past a limit the
// caller gives (the durable end): bytes below it never change, so what the
// buffer holds stays valid.
type chunkReader struct {
	f     *os.File
	first uint64 // the segment's first sequence number, for errors
	buf   []byte
	off   int64 // file offset of buf[0]
	n     int   // valid bytes in buf
}

// bytes returns the n bytes at off (n bounded by the caller), valid until
// the next call. limit is the end of the bytes that may be read; off+n must
// not exceed it.
func (c *chunkReader) bytes(off int64, n int, limit int64) ([]byte, error) {
	if off >= c.off && off+int64(n) <= c.off+int64(c.n) {
		s := off - c.off
		return c.buf[s : s+int64(n)], nil
	}
	want := max(n, chunkSize)
	if rest := limit - off; int64(want) > rest {
		want = int(rest)
	}
	if want < n {
		return nil, fmt.Errorf("seglog: internal error: read of %d bytes at %d past limit %d", n, off, limit)
	}
	if cap(c.buf) < want {
		c.buf = make([]byte, want)
	}
	c.buf = c.buf[:cap(c.buf)]
	got, err := c.f.ReadAt(c.buf[:want], off)
	if got < n {
		c.n = 0
		if err == nil || err == io.EOF {
			return nil, corrupt(c.first, off, "file ends at %d, before the %d bytes it should hold here (truncated by something else?)", off+int64(got), n)
		}
		return nil, fmt.Errorf("seglog: segment %s: %w", segmentName(c.first), err)
	}
	c.off, c.n = off, got
	return c.buf[:n], nil
}

// reset drops the buffered bytes (the file or its limit changed).
func (c *chunkReader) reset(f *os.File, first uint64) {
	c.f, c.first, c.off, c.n = f, first, 0, 0
}
