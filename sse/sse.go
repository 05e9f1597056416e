// Package sse reads and writes Server-Sent Events (the WHATWG event-stream
// format) for the gateways that relay streams: the MCP Streamable-HTTP
// gateway and the A2A proxy read an upstream's events one by one, decide
// each, and write what they relay with Write.
package sse

import (
	"bufio"
	"bytes"
	"io"
)

// Event is one event of a stream, or one comment line.
type Event struct {
	// Comment is a comment line (":" and what follows), returned alone as
	// soon as it is read (keep-alives); the other fields are then empty.
	Comment string
	// ID, Type and Retry are the last id:, event: and retry: values of the
	// event ("" when absent).
	ID, Type, Retry string
	// Fields are the event's non-data lines as received (id:, event:,
	// retry:, unknown fields), in order, without line ends.
	Fields []string
	// Data is the event's data: its data: lines joined with "\n". HasData
	// tells an event with an empty data: line from one with none.
	Data    []byte
	HasData bool
	// TooLong is set when a line or the data exceeded the reader's limit;
	// Data is then nil (the event must not be relayed as it is).
	TooLong bool
}

// Reader reads events from a stream, holding at most max bytes of one
// event's data (and of one line).
type Reader struct {
	br     *bufio.Reader
	max    int
	skipLF bool // the last line ended with a \r: skip a \n that follows
}

// NewReader returns a Reader of r with a per-event limit of max bytes.
func NewReader(r io.Reader, max int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 32<<10), max: max}
}

// Next returns the next comment or event: an event ends at a blank line
// (one with no fields and no data ends a run of comments, or is an empty
// event). At the end of the stream it returns io.EOF; an event the stream
// ended in the middle of is dropped, as the format says.
func (r *Reader) Next() (Event, error) {
	var ev Event
	for {
		line, long, err := r.line()
		if err != nil {
			return Event{}, err
		}
		if long {
			ev.TooLong, ev.Data = true, nil
			continue
		}
		if len(line) == 0 {
			return ev, nil
		}
		if line[0] == ':' {
			if len(ev.Fields) == 0 && !ev.HasData && !ev.TooLong {
				return Event{Comment: string(line)}, nil
			}
			continue // a comment inside an event: ignored
		}
		name, value, _ := bytes.Cut(line, []byte{':'})
		value = bytes.TrimPrefix(value, []byte{' '})
		if string(name) != "data" {
			ev.Fields = append(ev.Fields, string(line))
			switch string(name) {
			case "id":
				ev.ID = string(value)
			case "event":
				ev.Type = string(value)
			case "retry":
				ev.Retry = string(value)
			}
			continue
		}
		if ev.TooLong {
			continue
		}
		if ev.HasData {
			ev.Data = append(ev.Data, '\n')
		}
		ev.Data, ev.HasData = append(ev.Data, value...), true
		if len(ev.Data) > r.max {
			ev.TooLong, ev.Data = true, nil
		}
	}
}

// line reads one line without its end: \r\n, \n or a lone \r, as the
// format says (a browser splits there too, so what is decided is what the
// client parses); long reports a line over the limit, whose rest is skipped.
// A \r at the end of what has arrived ends the line at once: whether a \n
// follows is seen at the next read (skipLF), so a stream that pauses after
// a \r does not hold its event back.
func (r *Reader) line() (line []byte, long bool, err error) {
	if r.skipLF {
		r.skipLF = false
		if b, err := r.br.Peek(1); err == nil && b[0] == '\n' {
			_, _ = r.br.Discard(1)
		}
	}
	for {
		if _, err := r.br.Peek(1); err != nil {
			if err == io.EOF && len(line) > 0 && !long {
				return line, false, nil
			}
			return nil, false, err
		}
		buf, _ := r.br.Peek(r.br.Buffered())
		i := bytes.IndexAny(buf, "\r\n")
		chunk := buf
		if i >= 0 {
			chunk = buf[:i]
		}
		if !long {
			line = append(line, chunk...)
			if len(line) > r.max+len("data: ") {
				line, long = nil, true
			}
		}
		if i < 0 {
			_, _ = r.br.Discard(len(buf))
			continue
		}
		if buf[i] == '\r' {
			if i+1 < len(buf) {
				if buf[i+1] == '\n' {
					i++
				}
			} else {
				r.skipLF = true
			}
		}
		_, _ = r.br.Discard(i + 1)
		return line, long, nil
	}
}

// Write writes one event: its fields (e.g. "id: 7", "event: message"),
// then data as one data: line per line of it, then the blank line.
func Write(w io.Writer, fields []string, data []byte) error {
	var b bytes.Buffer
	for _, f := range fields {
		b.WriteString(f)
		b.WriteByte('\n')
	}
	for _, l := range bytes.Split(data, []byte("\n")) {
		b.WriteString("data: ")
		b.Write(bytes.TrimSuffix(l, []byte("\r")))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}
