package sse

import (
	"bytes"
	"io"
	"reflect"
	"strings"
	"testing"
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
