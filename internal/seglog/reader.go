package seglog

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// Reader reads records in order from a sequence number, across segments,
// up to the durable end of the log. A Reader is for one goroutine; any
// number of them may read while the writer appends.
type Reader struct {
	log     *Log
	seq     uint64 // sequence number of the next record
	first   uint64 // the current segment
	f       *os.File
	off     int64 // offset of the next frame in it
	c       chunkReader
	scratch [12]byte
	err     error // sticky
}

// Reader returns a Reader whose first record is from, which must be
// between First and Next (Next: the Reader waits at the end for the next
// Append). Close it when done.
func (l *Log) Reader(from uint64) (*Reader, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil, ErrClosed
	}
	oldest, next := l.segs[0].first, l.next
	i, found := l.segAt(from)
	if !found {
		i--
	}
	segFirst := l.segs[max(i, 0)].first
	l.mu.Unlock()
	switch {
	case from < oldest:
		return nil, fmt.Errorf("seglog: sequence %d: %w (the log starts at %d)", from, ErrRemoved, oldest)
	case from > next:
		return nil, fmt.Errorf("seglog: sequence %d is past the end of the log (%d)", from, next)
	}
	r := &Reader{log: l}
	if err := r.openSegment(segFirst); err != nil {
		return nil, err
	}
	for r.seq < from {
		if _, err := r.next(true); err != nil {
			r.Close()
			return nil, fmt.Errorf("seglog: skipping to sequence %d: %w", from, err)
		}
	}
	return r, nil
}

// openSegment makes segment first the current one, checking its header.
func (r *Reader) openSegment(first uint64) error {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
	size, _, ok, err := r.log.limit(first)
	if err != nil {
		return err
	}
	f, oerr := os.Open(r.log.path(first))
	if !ok || os.IsNotExist(oerr) {
		if f != nil {
			f.Close()
		}
		return fmt.Errorf("seglog: segment %s: %w", segmentName(first), ErrRemoved)
	}
	if oerr != nil {
		return fmt.Errorf("seglog: %w", oerr)
	}
	r.c.reset(f, first)
	h, err := r.c.bytes(0, headerSize, size)
	if err != nil {
		f.Close()
		return err
	}
	if err := checkHeader(h, first); err != nil {
		f.Close()
		return err
	}
	r.f, r.first, r.seq, r.off = f, first, first, headerSize
	return nil
}

// Next returns the next record and its sequence number. The payload is
// valid until the next call. At the durable end it returns io.EOF; a later
// call returns what was appended since. Any other error is final: a
// *CorruptError for invalid bytes (never skipped), ErrRemoved if Truncate
// removed the next segment, ErrClosed after the log's Close.
func (r *Reader) Next() (seq uint64, payload []byte, err error) {
	if r.err != nil {
		return 0, nil, r.err
	}
	seq = r.seq
	payload, err = r.next(false)
	if err != nil {
		if err != io.EOF {
			r.err = err
		}
		return 0, nil, err
	}
	return seq, payload, nil
}

// next reads the next record frame (only its header with skip), moving to
// the next segment at a seal.
func (r *Reader) next(skip bool) ([]byte, error) {
	for {
		if r.f == nil {
			return nil, ErrClosed
		}
		limit, _, ok, err := r.log.limit(r.first)
		if err != nil {
			return nil, err
		}
		if !ok { // removed meanwhile: its bytes are still ours to read
			limit = r.c.off + int64(r.c.n)
			if fi, err := r.f.Stat(); err == nil {
				limit = fi.Size()
			}
		}
		if r.off >= limit {
			return nil, io.EOF
		}
		if limit-r.off < frameHeader {
			return nil, corrupt(r.first, r.off, "torn frame header (%d of %d bytes) below the durable end", limit-r.off, frameHeader)
		}
		h, err := r.c.bytes(r.off, frameHeader, limit)
		if err != nil {
			return nil, err
		}
		word, want := binary.LittleEndian.Uint32(h), binary.LittleEndian.Uint32(h[4:])
		kind, length := word>>30, int64(word&lengthMask)
		switch {
		case kind > kindSeal:
			return nil, corrupt(r.first, r.off, "invalid frame kind %d", kind)
		case r.off+frameHeader+length > limit:
			return nil, corrupt(r.first, r.off, "frame of %d bytes runs past the durable end (%d)", length, limit)
		case kind == kindSeal && length != 8:
			return nil, corrupt(r.first, r.off, "seal frame of %d bytes, not 8", length)
		case !skip && length > int64(r.log.opts.MaxRecord):
			return nil, corrupt(r.first, r.off, "record of %d bytes, more than MaxRecord (%d)", length, r.log.opts.MaxRecord)
		}
		if kind == kindSeal || !skip {
			p, err := r.c.bytes(r.off+frameHeader, int(length), limit)
			if err != nil {
				return nil, err
			}
			if frameCRC(&r.scratch, r.seq, word, p) != want {
				return nil, corrupt(r.first, r.off, "CRC mismatch")
			}
			if kind == kindSeal {
				if next := binary.LittleEndian.Uint64(p); next != r.seq {
					return nil, corrupt(r.first, r.off, "seal names sequence %d, not %d", next, r.seq)
				}
				if _, _, ok, _ := r.log.limit(r.seq); !ok && r.seq >= r.log.Next() {
					return nil, io.EOF // the next segment is not created yet
				}
				if err := r.openSegment(r.seq); err != nil {
					return nil, err
				}
				continue
			}
			r.off += frameHeader + length
			r.seq++
			return p, nil
		}
		r.off += frameHeader + length
		r.seq++
		return nil, nil
	}
}

// Close releases the Reader's file.
func (r *Reader) Close() error {
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	r.err = ErrClosed
	return err
}
