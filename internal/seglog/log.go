package seglog

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// Sync is when Append makes a batch durable.
type Sync int

const (
	// SyncAlways calls fdatasync(2) after each batch's write(2) (default).
	SyncAlways Sync = iota
	// SyncNone only writes: a batch survives the process being killed but
	// not a power loss. For tests, and for a trace that accepts it.
	SyncNone
)

// Default bounds (see the package documentation).
const (
	DefaultSegmentSize = 64 << 20
	DefaultMaxRecord   = 4 << 20
	MinSegmentSize     = 4 << 10
	MaxSegmentSize     = 1 << 30
)

// Options configure a Log. The zero value is the defaults.
type Options struct {
	// SegmentSize is the size a segment never exceeds (DefaultSegmentSize
	// if 0; from MinSegmentSize to MaxSegmentSize).
	SegmentSize int64
	// MaxRecord is the largest payload (if 0, DefaultMaxRecord or, in a
	// smaller segment, the most that fits in one; at most 1 GiB-1 and small
	// enough that one record fits in a segment).
	MaxRecord int
	// Sync is the durability of Append (SyncAlways by default).
	Sync Sync
	// First is the sequence number of the first record of a log created in
	// an empty directory (1 if 0). Ignored when the directory has segments.
	First uint64
}

func (o *Options) fill() error {
	if o.SegmentSize == 0 {
		o.SegmentSize = DefaultSegmentSize
	}
	if o.MaxRecord == 0 && o.SegmentSize >= MinSegmentSize {
		o.MaxRecord = int(min(DefaultMaxRecord, o.maxBatch()-frameHeader))
	}
	if o.First == 0 {
		o.First = 1
	}
	switch {
	case o.SegmentSize < MinSegmentSize || o.SegmentSize > MaxSegmentSize:
		return fmt.Errorf("seglog: SegmentSize %d is outside [%d, %d]", o.SegmentSize, MinSegmentSize, MaxSegmentSize)
	case o.MaxRecord < 0 || o.MaxRecord > maxFrameLen:
		return fmt.Errorf("seglog: MaxRecord %d is outside [1, %d]", o.MaxRecord, maxFrameLen)
	case int64(o.MaxRecord)+frameHeader > o.maxBatch():
		return fmt.Errorf("seglog: MaxRecord %d does not fit in a segment of %d bytes (at most %d)", o.MaxRecord, o.SegmentSize, o.maxBatch()-frameHeader)
	case o.Sync != SyncAlways && o.Sync != SyncNone:
		return fmt.Errorf("seglog: unknown Sync %d", o.Sync)
	}
	return nil
}

// maxBatch is the most bytes of frames one batch may take.
func (o *Options) maxBatch() int64 { return o.SegmentSize - headerSize - sealSize }

// segment is what the log knows of one segment file.
type segment struct {
	first  uint64
	size   int64 // bytes durable (for the active segment) or the file's size
	sealed bool
}

// Recovery describes the tail Open cut from the newest segment.
type Recovery struct {
	Segment string // file name of the segment cut
	Offset  int64  // where it was cut (the end of its last valid batch)
	Cut     int64  // bytes removed
	Reason  error  // why the first removed byte is not part of the log (a *CorruptError)
}

// Log is an open segment log. See the package documentation for its
// format, durability and concurrency.
type Log struct {
	dir  string
	opts Options
	lock *os.File

	mu     sync.Mutex // guards segs, next, closed (readers take it)
	segs   []segment  // sorted by first; the last is the active one
	next   uint64     // sequence number of the next record appended
	closed bool

	// The writer's state: only the writer goroutine touches it.
	f         *os.File // the active segment, nil after a failed rotation
	size      int64    // its size: the end of its last batch
	buf       []byte
	scratch   [12]byte
	failed    error // sticky: a failed fdatasync
	recovered Recovery

	// writeAt and datasync are (*os.File).WriteAt and fdatasync, replaced
	// by tests to inject failures.
	writeAt  func(f *os.File, b []byte, off int64) (int, error)
	datasync func(f *os.File) error
}

// Open opens the log in dir (creating dir, 0700, and a first segment if it
// has none), checks its segments and recovers the newest one (see the
// package documentation).
func Open(dir string, opts Options) (*Log, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("seglog: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	l := &Log{dir: dir, opts: opts, lock: lock, writeAt: (*os.File).WriteAt, datasync: fdatasync}
	if err := l.open(); err != nil {
		if l.f != nil {
			l.f.Close()
		}
		lock.Close()
		return nil, err
	}
	return l, nil
}

func (l *Log) path(first uint64) string { return filepath.Join(l.dir, segmentName(first)) }

// list returns the first sequence numbers of dir's segment files, sorted.
func (l *Log) list() ([]uint64, error) {
	ents, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, fmt.Errorf("seglog: %w", err)
	}
	var firsts []uint64
	for _, e := range ents {
		if first, ok := parseSegmentName(e.Name()); ok && e.Type().IsRegular() {
			firsts = append(firsts, first)
		}
	}
	slices.Sort(firsts)
	return firsts, nil
}

func (l *Log) open() error {
	firsts, err := l.list()
	if err != nil {
		return err
	}
	if len(firsts) == 0 {
		l.next = l.opts.First
		return l.create(l.opts.First)
	}
	for i, first := range firsts[:len(firsts)-1] {
		seg, err := l.checkSealed(first, firsts[i+1])
		if err != nil {
			return err
		}
		l.segs = append(l.segs, seg)
	}
	return l.recover(firsts[len(firsts)-1])
}

// checkSealed checks the header and the seal of an older segment: the seal
// must name next, the first sequence number of the segment after it.
func (l *Log) checkSealed(first, next uint64) (segment, error) {
	f, err := os.Open(l.path(first))
	if err != nil {
		return segment{}, fmt.Errorf("seglog: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return segment{}, fmt.Errorf("seglog: %w", err)
	}
	size := fi.Size()
	if size < headerSize+sealSize {
		return segment{}, corrupt(first, 0, "sealed segment of %d bytes, too short for a header and a seal", size)
	}
	c := chunkReader{f: f, first: first}
	h, err := c.bytes(0, headerSize, headerSize)
	if err != nil {
		return segment{}, err
	}
	if err := checkHeader(h, first); err != nil {
		return segment{}, err
	}
	s, err := c.bytes(size-sealSize, sealSize, size)
	if err != nil {
		return segment{}, err
	}
	var want [sealSize]byte
	if string(appendSeal(want[:0], &l.scratch, next)) != string(s) {
		got := binary.LittleEndian.Uint64(s[frameHeader:])
		return segment{}, corrupt(first, size-sealSize, "no valid seal naming the next segment's first sequence %d (it is not the newest segment; the 8 bytes there say %d): a segment is missing or this one is torn", next, got)
	}
	if next < first {
		return segment{}, corrupt(first, size-sealSize, "seal names sequence %d, before the segment's first %d", next, first)
	}
	return segment{first: first, size: size, sealed: true}, nil
}

// recover opens the newest segment for appending, cutting a torn tail.
func (l *Log) recover(first uint64) error {
	if len(l.segs) > 0 {
		if prev := l.segs[len(l.segs)-1]; prev.first > first { // cannot happen: sorted
			return fmt.Errorf("seglog: internal error: segments out of order")
		}
	}
	f, err := os.OpenFile(l.path(first), os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("seglog: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("seglog: %w", err)
	}
	size := fi.Size()
	c := chunkReader{f: f, first: first}
	if size <= headerSize {
		var h []byte
		if size == headerSize {
			if h, err = c.bytes(0, headerSize, size); err != nil {
				f.Close()
				return err
			}
		}
		if size < headerSize || checkHeader(h, first) != nil {
			// A crash while creating it: nothing was ever written after
			// its header, which is written and synced first.
			f.Close()
			l.next = first
			if size > 0 {
				l.recovered = Recovery{Segment: segmentName(first), Cut: size, Reason: corrupt(first, 0, "torn segment header (%d bytes)", size)}
			}
			return l.create(first)
		}
	}
	h, err := c.bytes(0, headerSize, size)
	if err != nil {
		f.Close()
		return err
	}
	if err := checkHeader(h, first); err != nil {
		f.Close()
		return err
	}
	res, err := scanFrames(&c, first, size)
	if err != nil {
		f.Close()
		return err
	}
	if res.bad != nil {
		if err := f.Truncate(res.end); err != nil {
			f.Close()
			return fmt.Errorf("seglog: cutting the torn tail of %s at %d: %w", segmentName(first), res.end, err)
		}
		if err := l.syncFile(f); err != nil {
			f.Close()
			return fmt.Errorf("seglog: cutting the torn tail of %s at %d: %w", segmentName(first), res.end, err)
		}
		l.recovered = Recovery{Segment: segmentName(first), Offset: res.end, Cut: size - res.end, Reason: res.bad}
	}
	l.next = res.next
	l.segs = append(l.segs, segment{first: first, size: res.end, sealed: res.sealed})
	if res.sealed { // a crash after sealing, before the next segment existed
		f.Close()
		return l.create(res.next)
	}
	l.f, l.size = f, res.end
	return nil
}

// create creates the segment first (replacing a torn one), writes its
// header and syncs it and the directory, and makes it the active segment.
func (l *Log) create(first uint64) error {
	f, err := os.OpenFile(l.path(first), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("seglog: %w", err)
	}
	var h [headerSize]byte
	if _, err := f.WriteAt(appendHeader(h[:0], first), 0); err != nil {
		f.Close()
		return fmt.Errorf("seglog: creating segment %s: %w", segmentName(first), err)
	}
	if err := l.syncFile(f); err != nil {
		f.Close()
		return fmt.Errorf("seglog: creating segment %s: %w", segmentName(first), err)
	}
	if err := l.syncDir(); err != nil {
		f.Close()
		return fmt.Errorf("seglog: creating segment %s: %w", segmentName(first), err)
	}
	l.mu.Lock()
	if n := len(l.segs); n > 0 && l.segs[n-1].first == first { // replaced
		l.segs = l.segs[:n-1]
	}
	l.segs = append(l.segs, segment{first: first, size: headerSize})
	l.mu.Unlock()
	l.f, l.size = f, headerSize
	return nil
}

func (l *Log) syncFile(f *os.File) error {
	if l.opts.Sync == SyncNone {
		return nil
	}
	return l.datasync(f)
}

func (l *Log) syncDir() error {
	if l.opts.Sync == SyncNone {
		return nil
	}
	d, err := os.Open(l.dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return syncDir(d)
}

// Recovered reports the torn tail Open cut from the newest segment; Cut is
// 0 if there was none.
func (l *Log) Recovered() Recovery { return l.recovered }

// Next returns the sequence number the next appended record will get: every
// record before it is durable and readable.
func (l *Log) Next() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.next
}

// First returns the sequence number of the oldest record the log still
// holds (or would hold: Next, if it holds none).
func (l *Log) First() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.segs[0].first
}

// Append writes a batch of records as one write(2), makes it durable as
// Options.Sync says, and returns the sequence number of its first record
// (the others follow in order). On error no record of the batch is in the
// log, except after a failed fdatasync, when the log stops (see the package
// documentation). Only one goroutine may call Append, Truncate and Close.
// payloads are not retained.
func (l *Log) Append(payloads [][]byte) (first uint64, err error) {
	if l.failed != nil {
		return 0, l.failed
	}
	if l.isClosed() {
		return 0, ErrClosed
	}
	if len(payloads) == 0 {
		return 0, errors.New("seglog: empty batch")
	}
	total := int64(0)
	for i, p := range payloads {
		if len(p) > l.opts.MaxRecord {
			return 0, fmt.Errorf("seglog: record %d of the batch has %d bytes, more than MaxRecord (%d)", i, len(p), l.opts.MaxRecord)
		}
		total += frameHeader + int64(len(p))
	}
	if total > l.opts.maxBatch() {
		return 0, fmt.Errorf("seglog: batch of %d records takes %d bytes, more than a segment of %d holds (%d)", len(payloads), total, l.opts.SegmentSize, l.opts.maxBatch())
	}
	if l.f == nil { // a rotation failed after sealing
		if err := l.create(l.next); err != nil {
			return 0, err
		}
	} else if l.size > headerSize && l.size+total+sealSize > l.opts.SegmentSize {
		if err := l.rotate(); err != nil {
			return 0, err
		}
	}
	first = l.next
	l.buf = appendBatch(l.buf[:0], &l.scratch, first, payloads)
	if err := l.write(l.buf); err != nil {
		return 0, err
	}
	l.mu.Lock()
	l.next += uint64(len(payloads))
	l.segs[len(l.segs)-1].size = l.size
	l.mu.Unlock()
	return first, nil
}

// write appends b to the active segment and syncs it. A failed write is
// undone; a failed sync stops the log.
func (l *Log) write(b []byte) error {
	if _, err := l.writeAt(l.f, b, l.size); err != nil {
		if terr := l.f.Truncate(l.size); terr != nil {
			l.failed = fmt.Errorf("seglog: segment %s stopped: writing at %d: %v; undoing it: %w", filepath.Base(l.f.Name()), l.size, err, terr)
			return l.failed
		}
		return fmt.Errorf("seglog: writing segment %s at %d: %w", filepath.Base(l.f.Name()), l.size, err)
	}
	if err := l.syncFile(l.f); err != nil {
		l.failed = fmt.Errorf("seglog: segment %s stopped: fdatasync after writing at %d: %w", filepath.Base(l.f.Name()), l.size, err)
		return l.failed
	}
	l.size += int64(len(b))
	return nil
}

// rotate seals the active segment and creates the next one.
func (l *Log) rotate() error {
	var seal [sealSize]byte
	if err := l.write(appendSeal(seal[:0], &l.scratch, l.next)); err != nil {
		return err
	}
	l.mu.Lock()
	l.segs[len(l.segs)-1].size, l.segs[len(l.segs)-1].sealed = l.size, true
	l.mu.Unlock()
	err := l.f.Close()
	l.f = nil
	if err != nil {
		return fmt.Errorf("seglog: closing sealed segment: %w", err)
	}
	return l.create(l.next)
}

func (l *Log) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// Truncate removes every segment all of whose records have sequence numbers
// below before (the oldest first; never the active segment), and returns how
// many it removed. A Reader still reading a removed segment finishes it (its
// file stays open) and then fails with ErrRemoved if it needs an older one.
func (l *Log) Truncate(before uint64) (int, error) {
	if l.isClosed() {
		return 0, ErrClosed
	}
	removed := 0
	for {
		l.mu.Lock()
		if len(l.segs) < 2 || l.segs[1].first > before {
			l.mu.Unlock()
			break
		}
		first := l.segs[0].first
		l.mu.Unlock()
		// Unlink first: a crash in between leaves a log starting later,
		// never one with a hole.
		if err := os.Remove(l.path(first)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return removed, fmt.Errorf("seglog: %w", err)
		}
		l.mu.Lock()
		l.segs = l.segs[1:]
		l.mu.Unlock()
		removed++
	}
	if removed > 0 {
		if err := l.syncDir(); err != nil {
			return removed, fmt.Errorf("seglog: syncing %s after removing segments: %w", l.dir, err)
		}
	}
	return removed, nil
}

// Close closes the log. Readers fail with ErrClosed afterwards.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.closed = true
	l.mu.Unlock()
	var err error
	if l.f != nil {
		err = l.f.Close()
		l.f = nil
	}
	if lerr := l.lock.Close(); err == nil {
		err = lerr
	}
	return err
}

// segAt returns the index of the segment whose first record is seq, or
// where it would be (found false). The caller holds l.mu.
func (l *Log) segAt(seq uint64) (int, bool) {
	return slices.BinarySearchFunc(l.segs, seq, func(s segment, f uint64) int { return cmp.Compare(s.first, f) })
}

// limit returns the durable size of segment first and whether it is sealed;
// ok is false if the log no longer holds it.
func (l *Log) limit(first uint64) (size int64, sealed, ok bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, false, false, ErrClosed
	}
	i, found := l.segAt(first)
	if !found {
		return 0, false, false, nil
	}
	return l.segs[i].size, l.segs[i].sealed, true, nil
}
