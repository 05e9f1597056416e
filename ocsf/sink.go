package ocsf

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
)

// Defaults of SinkOptions (trace.ocsf_max_size, ocsf_max_files,
// ocsf_queue).
const (
	DefaultMaxSize  = 100 << 20
	DefaultMaxFiles = 5
	DefaultQueue    = 4096
)

// SinkOptions configure a Sink; zero values take the defaults.
type SinkOptions struct {
	// Path is the JSONL file events are appended to (mode 0600).
	Path string
	// MaxSize rotates the file before a write would take it past this
	// many bytes: PATH becomes PATH.1, PATH.1 becomes PATH.2, ...
	MaxSize int64
	// MaxFiles is how many rotated files are kept; older ones are removed.
	MaxFiles int
	// Queue bounds the records waiting to be written; a record that finds
	// it full is dropped and counted.
	Queue int
	// OnError is told of write errors (nil: ignored); it must not block.
	OnError func(error)
}

// Sink writes every decision's OCSF events to a rotated JSONL file. It is a
// pipeline.RecordObserver: ObserveRecord queues the record as stored (already
// redacted) and returns; a goroutine renders and writes it. Safe for
// concurrent use; Close flushes it.
type Sink struct {
	o       SinkOptions
	q       chan *audit.Record
	stop    chan struct{}
	done    chan struct{}
	pending atomic.Int64
	dropped atomic.Uint64
	closing atomic.Bool
	once    sync.Once
	f       *os.File // owned by the writer goroutine
	size    int64
}

var _ pipeline.RecordObserver = (*Sink)(nil)

// NewSink opens (creating, mode 0600) the file of o.Path and starts the
// writer.
func NewSink(o SinkOptions) (*Sink, error) {
	if o.Path == "" {
		return nil, fmt.Errorf("ocsf sink: no file")
	}
	if o.MaxSize <= 0 {
		o.MaxSize = DefaultMaxSize
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	if o.Queue <= 0 {
		o.Queue = DefaultQueue
	}
	s := &Sink{o: o, q: make(chan *audit.Record, o.Queue), stop: make(chan struct{}), done: make(chan struct{})}
	if err := os.MkdirAll(filepath.Dir(o.Path), 0o700); err != nil {
		return nil, fmt.Errorf("ocsf sink: %w", err)
	}
	if err := s.open(); err != nil {
		return nil, err
	}
	go s.run()
	return s, nil
}

func (s *Sink) open() error {
	f, err := os.OpenFile(s.o.Path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("ocsf sink: %w", err)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("ocsf sink: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("ocsf sink: %w", err)
	}
	s.f, s.size = f, fi.Size()
	return nil
}

// Observe implements pipeline.Observer; without the stored record it writes
// what ObserveRecord writes for an unrecorded decision.
func (s *Sink) Observe(ev *warden.Event, out *warden.Outcome, recordErr error) {
	s.ObserveRecord(context.Background(), ev, out, nil, recordErr)
}

// ObserveRecord queues rec's events for writing, or drops and counts them
// when the queue is full. A decision that was not recorded (no trace, or
// recording failed) is written from a record built for it with no input,
// output or views: those were never redacted, so they are left out.
func (s *Sink) ObserveRecord(_ context.Context, ev *warden.Event, out *warden.Outcome, rec *audit.Record, _ error) {
	if s.closing.Load() || len(s.q) == cap(s.q) {
		s.dropped.Add(1)
		return
	}
	if rec == nil {
		rec = audit.NewRecord(ev, out, time.Now())
		rec.Input, rec.Output, rec.Views = nil, nil, nil
	}
	s.pending.Add(1)
	select {
	case s.q <- rec:
	default:
		s.pending.Add(-1)
		s.dropped.Add(1)
	}
}

// Dropped returns how many decisions a full queue dropped so far.
func (s *Sink) Dropped() uint64 { return s.dropped.Load() }

// run writes queued records in batches until stopped, then writes what is
// left and closes the file.
func (s *Sink) run() {
	defer close(s.done)
	var buf bytes.Buffer
	for {
		select {
		case r := <-s.q:
			s.batch(&buf, r)
		case <-s.stop:
			for {
				select {
				case r := <-s.q:
					s.batch(&buf, r)
				default:
					if err := s.f.Close(); err != nil {
						s.fail(err)
					}
					return
				}
			}
		}
	}
}

// batch writes r and whatever else is queued (up to 256 records), one
// event per line, in as few writes as rotation allows.
func (s *Sink) batch(buf *bytes.Buffer, r *audit.Record) {
	n := 0
	var line bytes.Buffer
	for {
		line.Reset()
		for _, e := range Events(r) {
			b, err := json.Marshal(e)
			if err != nil {
				s.fail(err)
				continue
			}
			line.Write(b)
			line.WriteByte('\n')
		}
		// A record's events stay in one file: rotate before they would
		// take it past MaxSize (a record larger than MaxSize gets a file
		// of its own).
		if s.size+int64(buf.Len()+line.Len()) > s.o.MaxSize && s.size+int64(buf.Len()) > 0 {
			s.write(buf.Bytes())
			buf.Reset()
			if err := s.rotate(); err != nil {
				s.fail(err)
			}
		}
		buf.Write(line.Bytes())
		n++
		if n >= 256 {
			break
		}
		select {
		case r = <-s.q:
			continue
		default:
		}
		break
	}
	s.write(buf.Bytes())
	buf.Reset()
	s.pending.Add(-int64(n))
}

// write appends b to the file.
func (s *Sink) write(b []byte) {
	if len(b) == 0 {
		return
	}
	n, err := s.f.Write(b)
	s.size += int64(n)
	if err != nil {
		s.fail(err)
	}
}

// rotate closes the file, shifts PATH.i to PATH.i+1 (removing the oldest
// beyond MaxFiles), renames PATH to PATH.1 and opens a new PATH.
func (s *Sink) rotate() error {
	if err := s.f.Close(); err != nil {
		s.fail(err)
	}
	p := s.o.Path
	_ = os.Remove(fmt.Sprintf("%s.%d", p, s.o.MaxFiles))
	for i := s.o.MaxFiles - 1; i >= 1; i-- {
		from := fmt.Sprintf("%s.%d", p, i)
		if _, err := os.Stat(from); err == nil {
			if err := os.Rename(from, fmt.Sprintf("%s.%d", p, i+1)); err != nil {
				s.fail(err)
			}
		}
	}
	if err := os.Rename(p, p+".1"); err != nil {
		s.fail(err)
	}
	return s.open()
}

func (s *Sink) fail(err error) {
	if s.o.OnError != nil {
		s.o.OnError(fmt.Errorf("ocsf sink %s: %w", s.o.Path, err))
	}
}

// Flush waits until every queued record is written, or ctx is done.
func (s *Sink) Flush(ctx context.Context) error {
	for s.pending.Load() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}

// Close stops taking records, writes those queued (until ctx is done) and
// closes the file. It is safe to call twice.
func (s *Sink) Close(ctx context.Context) error {
	s.closing.Store(true)
	s.once.Do(func() { close(s.stop) })
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("ocsf sink: closing: %w", ctx.Err())
	}
}
