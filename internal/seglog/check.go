package seglog

import (
	"fmt"
	"os"
)

// Check verifies every frame of every segment the log holds (each CRC, each
// batch's commit marker, each seal naming the next segment), reading each
// segment once in 64 KiB chunks, up to the durable end. It returns the first
// problem found (a *CorruptError for invalid bytes), or nil. It may run
// while the writer appends; a segment Truncate removes meanwhile is skipped.
func (l *Log) Check() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	segs := append([]segment(nil), l.segs...)
	next := l.next
	l.mu.Unlock()
	for i, s := range segs {
		f, err := os.Open(l.path(s.first))
		if os.IsNotExist(err) && i < len(segs)-1 {
			continue // removed by Truncate
		}
		if err != nil {
			return fmt.Errorf("seglog: %w", err)
		}
		err = checkSegment(f, s, segs, i, next)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// checkSegment checks segment segs[i], whose durable size is s.size; next
// is the log's next sequence number when segs was taken.
func checkSegment(f *os.File, s segment, segs []segment, i int, next uint64) error {
	c := chunkReader{f: f, first: s.first}
	h, err := c.bytes(0, headerSize, s.size)
	if err != nil {
		return err
	}
	if err := checkHeader(h, s.first); err != nil {
		return err
	}
	res, err := scanFrames(&c, s.first, s.size)
	switch {
	case err != nil:
		return err
	case res.bad != nil:
		return res.bad
	case i < len(segs)-1 && !res.sealed:
		return corrupt(s.first, res.end, "older segment not sealed")
	case i < len(segs)-1 && res.next != segs[i+1].first:
		return corrupt(s.first, res.end, "sealed at sequence %d, but the next segment starts at %d", res.next, segs[i+1].first)
	case i == len(segs)-1 && res.next != next:
		return corrupt(s.first, res.end, "ends at sequence %d, but the log's next is %d", res.next, next)
	}
	return nil
}
