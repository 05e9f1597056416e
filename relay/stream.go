package relay

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/wardenhq/warden/sse"
)

// Event is one event (or comment) of an upstream's stream.
type Event = sse.Event

// Stream is an SSE response to the client.
type Stream struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// OpenStream starts an SSE response with status: Content-Type
// text/event-stream, Cache-Control no-cache, no Content-Length, no write
// deadline (a stream outlives the server's write timeout), and the
// headers flushed, since the client waits for them on a stream that may
// stay quiet. Other headers are set on w before.
func OpenStream(w http.ResponseWriter, status int) *Stream {
	s := &Stream{w: w, rc: http.NewResponseController(w)}
	_ = s.rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Del("Content-Length")
	w.WriteHeader(status)
	_ = s.rc.Flush()
	return s
}

// Event writes one event — its fields (e.g. "id: 7"), then data, one
// data: line per line of it — and flushes it.
func (s *Stream) Event(fields []string, data []byte) error {
	if err := sse.Write(s.w, fields, data); err != nil {
		return err
	}
	return s.Flush()
}

// Line writes line and a line end, unflushed: a field of the event
// written next ("retry: 500"), or a blank line.
func (s *Stream) Line(line string) error {
	_, err := io.WriteString(s.w, line+"\n")
	return err
}

// Flush sends what was written. A writer that cannot flush is not an
// error: the client still gets the bytes.
func (s *Stream) Flush() error {
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// Events tune Relay.
type Events struct {
	// Max bounds one event's data, and one line (sse.Reader): an event
	// over it reaches the handler with TooLong set and no data.
	Max int
	// Idle bounds the upstream's silence: the call's timer is set to it
	// when the relay starts and after every event.
	Idle time.Duration
	// KeepAlive relays comments (keep-alives) as they come, each one
	// activity that re-arms the timer. False: they are dropped and are
	// no activity; only events are (the blank line that follows a
	// comment is one: an empty event).
	KeepAlive bool
}

// Ending is why Relay returned.
type Ending int

const (
	// EOF: the upstream ended the stream (an unfinished last event is
	// dropped, as the format says).
	EOF Ending = iota
	// Gone: the client went away (the call's parent context ended).
	Gone
	// Idle: the upstream sent nothing for Events.Idle.
	Idle
	// Broken: reading the upstream's stream failed.
	Broken
	// Stopped: the handler returned an error (it ended the stream, or
	// the client could not be written to), or relaying a comment failed.
	Stopped
)

// End is why Relay returned, with the error that ended it (nil for EOF
// and Idle).
type End struct {
	Why Ending
	Err error
}

// Relay reads the events of body, the answer of call c, and hands each to
// each, in order, until the stream ends or each returns an error. each
// decides the event and writes what the client gets in its place with s
// (nothing, the event, a rewrite, an error for its id); events are never
// written by Relay itself. A stream is never cut for its length, only
// for silence (Events.Idle); the upstream's stream is left to c.Done to
// close.
func (s *Stream) Relay(c *Call, body io.Reader, o Events, each func(Event) error) End {
	c.Rearm(o.Idle)
	rd := sse.NewReader(body, o.Max)
	for {
		ev, err := rd.Next()
		if err != nil {
			switch {
			case c.Gone():
				return End{Gone, err}
			case c.TimedOut():
				return End{Idle, nil}
			case errors.Is(err, io.EOF):
				return End{EOF, nil}
			}
			return End{Broken, err}
		}
		if ev.Comment != "" && !o.KeepAlive {
			continue
		}
		c.Rearm(o.Idle)
		if ev.Comment != "" {
			if err := s.Line(ev.Comment); err != nil {
				return End{Stopped, err}
			}
			if err := s.Flush(); err != nil {
				return End{Stopped, err}
			}
			continue
		}
		if err := each(ev); err != nil {
			return End{Stopped, err}
		}
	}
}
