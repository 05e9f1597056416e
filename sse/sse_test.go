package sse

import (
	"bytes"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestReader(t *testing.T) {
	stream := ": keep-alive\n" +
		"id: e1\nevent: message\ndata: {\"a\":1}\n\n" +
		"data: line one\r\ndata: line two\r\n\r\n" +
		"retry: 500\n\n" +
		"data:\n\n" +
		"x-unknown: v\ndata: " + strings.Repeat("z", 40) + "\n\n" +
		"id: e9\ndata: cut off by the end of the stream"
	r := NewReader(strings.NewReader(stream), 32)
	want := []Event{
		{Comment: ": keep-alive"},
		{ID: "e1", Type: "message", Fields: []string{"id: e1", "event: message"}, Data: []byte(`{"a":1}`), HasData: true},
		{Data: []byte("line one\nline two"), HasData: true},
		{Retry: "500", Fields: []string{"retry: 500"}},
		{Data: []byte{}, HasData: true},
		{Fields: []string{"x-unknown: v"}, TooLong: true},
	}
	for i, w := range want {
		got, err := r.Next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if got.Data == nil && w.Data != nil && len(w.Data) == 0 {
			got.Data = []byte{}
		}
		if !reflect.DeepEqual(got, w) {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, got, w)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("the unfinished last event: %v, want io.EOF", err)
	}
}

// TestReaderLineEnds: \r\n, \n and a lone \r each end a line, as the
// format says and browsers read it; a \r inside what would otherwise be one
// line is two lines (a client would read two), never one value holding it.
func TestReaderLineEnds(t *testing.T) {
	for _, c := range []struct {
		name, stream string
		want         []Event
	}{
		{"lone CR", "id: 1\rdata: a\rdata: b\r\r", []Event{{ID: "1", Fields: []string{"id: 1"}, Data: []byte("a\nb"), HasData: true}}},
		{"mixed", "data: a\r\ndata: b\n\r\ndata: c\r\n\r", []Event{{Data: []byte("a\nb"), HasData: true}, {Data: []byte("c"), HasData: true}}},
		{"CR inside a data value", "data: {\"a\":1}\revent: evil\n\n", []Event{{Type: "evil", Fields: []string{"event: evil"}, Data: []byte(`{"a":1}`), HasData: true}}},
		{"CR then LF across reads", "data: x\r", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(c.stream), 100)
			for i, w := range c.want {
				got, err := r.Next()
				if err != nil || !reflect.DeepEqual(got, w) {
					t.Fatalf("event %d: %+v %v, want %+v", i, got, err, w)
				}
			}
			if ev, err := r.Next(); err != io.EOF {
				t.Fatalf("after the events: %+v %v, want io.EOF", ev, err)
			}
		})
	}
}

// TestReaderCRDoesNotWait: an event whose blank line is a \r at the end of
// what has arrived is returned at once, not after the next byte.
func TestReaderCRDoesNotWait(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { _, _ = pw.Write([]byte("data: now\r\r")) }()
	r := NewReader(pr, 100)
	got := make(chan Event, 1)
	go func() {
		ev, _ := r.Next()
		got <- ev
	}()
	select {
	case ev := <-got:
		if string(ev.Data) != "now" {
			t.Fatalf("got %+v", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the event waited for a byte after its \\r")
	}
	go func() { _, _ = pw.Write([]byte("\ndata: next\n\n")) }()
	if ev, err := r.Next(); err != nil || string(ev.Data) != "next" {
		t.Fatalf("after a \\r\\n split across reads: %+v %v", ev, err)
	}
}

func TestWrite(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, []string{"id: 7", "event: message"}, []byte("a\nb\r")); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "id: 7\nevent: message\ndata: a\ndata: b\n\n"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	ev, err := NewReader(&b, 100).Next()
	if err != nil || string(ev.Data) != "a\nb" || ev.ID != "7" {
		t.Fatalf("read back %+v %v", ev, err)
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("data: x\n\n: c\nid: 1\ndata: y\ndata: z\n\n"), 8)
	f.Fuzz(func(t *testing.T, b []byte, max int) {
		if max < 1 || max > 1<<16 {
			return
		}
		r := NewReader(bytes.NewReader(b), max)
		for range len(b) + 1 {
			ev, err := r.Next()
			if err != nil {
				return
			}
			if len(ev.Data) > max {
				t.Fatalf("data of %d bytes over the limit %d", len(ev.Data), max)
			}
			if ev.TooLong && ev.Data != nil {
				t.Fatal("a too-long event kept data")
			}
		}
		t.Fatal("Next did not reach the end")
	})
}
