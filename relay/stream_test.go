package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/jsonrpc"
	"github.com/wardenhq/warden/sse"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// decideTest is what a gateway does with each event, for the tests: an
// event over the bound or that is not JSON-RPC becomes an error (id
// null), an event saying "refuse" an error for its id as sent, the others
// pass as they came; an event without data is dropped.
func decideTest(st *Stream) func(Event) error {
	return func(ev Event) error {
		switch {
		case ev.TooLong:
			return st.Event(ev.Fields, jsonrpc.ErrorResponse(nil, jsonrpc.CodeUpstream, "event over the limit", nil))
		case !ev.HasData:
			return nil
		}
		env, ok := jsonrpc.ReadEnvelope(ev.Data)
		if !ok || !json.Valid(ev.Data) {
			return st.Event(ev.Fields, jsonrpc.ErrorResponse(nil, jsonrpc.CodeUpstream, "not JSON-RPC", nil))
		}
		if bytes.Contains(ev.Data, []byte("refuse")) {
			return st.Event(ev.Fields, jsonrpc.ErrorResponse(env.ID, jsonrpc.CodeDenied, "denied by the test policy", nil))
		}
		return st.Event(ev.Fields, ev.Data)
	}
}

// TestRelayWire: an upstream's stream (testdata/upstream.sse) relayed over
// HTTP through a gateway built of Start, Do, OpenStream and Relay, as the
// client receives it (testdata/*.golden): the events in order, ids as
// sent, the refused one replaced by an error for its id, the one over the
// bound and the unfinished last one not relayed as they are, comments
// relayed or dropped.
func TestRelayWire(t *testing.T) {
	upstream, err := os.ReadFile(filepath.Join("testdata", "upstream.sse"))
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Configured") != "secret" || r.Header.Get("Accept") != "text/event-stream" {
			t.Errorf("upstream got headers %v", r.Header)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(upstream)
	}))
	defer up.Close()
	for _, tt := range []struct {
		golden    string
		keepAlive bool
	}{
		{"keepalive.golden", true},
		{"dropcomments.golden", false},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			var end End
			gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				c := Start(r.Context(), time.Minute)
				defer c.Done()
				req, err := c.Request(Request{Method: http.MethodPost, URL: up.URL, Body: []byte(`{}`),
					From: r.Header, Pass: []string{"Accept"}, Set: map[string]string{"X-Configured": "secret"}})
				if err != nil {
					t.Error(err)
					return
				}
				resp, err := c.Do(Client(nil, 1, 0), req)
				if err != nil {
					t.Error(err)
					return
				}
				defer resp.Body.Close()
				if !IsEventStream(resp.Header.Get("Content-Type")) {
					t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
				}
				c.Stop()
				st := OpenStream(w, http.StatusOK)
				end = st.Relay(c, resp.Body, Events{Max: 200, Idle: time.Minute, KeepAlive: tt.keepAlive}, decideTest(st))
			}))
			defer gw.Close()
			req, _ := http.NewRequest(http.MethodPost, gw.URL, strings.NewReader(`{}`))
			req.Header.Set("Accept", "text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var got bytes.Buffer
			fmt.Fprintf(&got, "HTTP %d\n", resp.StatusCode)
			for _, k := range []string{"Content-Type", "Cache-Control", "Content-Length"} {
				fmt.Fprintf(&got, "%s: %s\n", k, resp.Header.Get(k))
			}
			got.WriteString("\n")
			got.Write(body)
			path := filepath.Join("testdata", tt.golden)
			if *update {
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("the client got:\n%s\nwant (%s):\n%s", got.Bytes(), path, want)
			}
			if end.Why != EOF {
				t.Errorf("the relay ended with %v (%v), want EOF", end.Why, end.Err)
			}
		})
	}
}

// upstreamReader is an upstream's stream in time: each chunk after gap,
// then EOF, or, when hang, nothing until ctx ends.
type upstreamReader struct {
	ctx    context.Context
	chunks []string
	gap    time.Duration
	hang   bool
	err    error // returned after the chunks instead of EOF
}

func (u *upstreamReader) Read(p []byte) (int, error) {
	if len(u.chunks) == 0 {
		switch {
		case u.err != nil:
			return 0, u.err
		case u.hang:
			<-u.ctx.Done()
			return 0, u.ctx.Err()
		}
		return 0, io.EOF
	}
	select {
	case <-time.After(u.gap):
	case <-u.ctx.Done():
		return 0, u.ctx.Err()
	}
	n := copy(p, u.chunks[0])
	u.chunks[0] = u.chunks[0][n:]
	if u.chunks[0] == "" {
		u.chunks = u.chunks[1:]
	}
	return n, nil
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestRelayEnds(t *testing.T) {
	reset := errors.New("connection reset by peer")
	stop := errors.New("the gateway ended the stream")
	event := "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
	comment := ": keep-alive\n\n" // a comment, then an empty event
	lone := ": keep-alive\n"
	tests := []struct {
		name      string
		chunks    []string
		gap, idle time.Duration
		hang      bool
		err       error
		keepAlive bool
		leave     bool // the client goes away after the first event
		stopAt    int  // the handler stops at this event (1-based; 0 never)
		want      Ending
		wantErr   error
		wantOut   string
	}{
		{name: "the upstream ends it", chunks: []string{event, event}, idle: time.Minute, want: EOF,
			wantOut: event + event},
		{name: "the upstream goes silent", chunks: []string{event}, idle: 50 * time.Millisecond, hang: true, want: Idle,
			wantOut: event},
		{name: "events keep it open longer than the idle time", chunks: repeat(event, 10), gap: 40 * time.Millisecond,
			idle: 250 * time.Millisecond, want: EOF, wantOut: strings.Repeat(event, 10)},
		{name: "comments relayed keep it open", chunks: append(repeat(comment, 10), event), gap: 40 * time.Millisecond,
			idle: 250 * time.Millisecond, keepAlive: true, want: EOF, wantOut: strings.Repeat(": keep-alive\n", 10) + event},
		{name: "comments dropped do not", chunks: append(repeat(lone, 10), event), gap: 40 * time.Millisecond,
			idle: 250 * time.Millisecond, want: Idle, wantOut: ""},
		{name: "the blank line after a dropped comment does", chunks: append(repeat(comment, 10), event), gap: 40 * time.Millisecond,
			idle: 250 * time.Millisecond, want: EOF, wantOut: event},
		{name: "the stream breaks", chunks: []string{event}, err: reset, idle: time.Minute, want: Broken, wantErr: reset,
			wantOut: event},
		{name: "the client goes away", chunks: []string{event}, hang: true, leave: true, idle: time.Minute, want: Gone,
			wantErr: context.Canceled, wantOut: event},
		{name: "the handler ends it", chunks: []string{event, event, event}, stopAt: 2, idle: time.Minute, want: Stopped,
			wantErr: stop, wantOut: event},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent, leave := context.WithCancel(context.Background())
			defer leave()
			c := Start(parent, time.Minute)
			defer c.Done()
			rec := httptest.NewRecorder()
			st := OpenStream(rec, http.StatusOK)
			body := &upstreamReader{ctx: c.Context(), chunks: tt.chunks, gap: tt.gap, hang: tt.hang, err: tt.err}
			n := 0
			end := st.Relay(c, body, Events{Max: 1 << 10, Idle: tt.idle, KeepAlive: tt.keepAlive}, func(ev Event) error {
				if !ev.HasData {
					return nil
				}
				n++
				if n == tt.stopAt {
					return stop
				}
				if err := st.Event(nil, ev.Data); err != nil {
					return err
				}
				if tt.leave {
					leave()
				}
				return nil
			})
			if end.Why != tt.want || !errors.Is(end.Err, tt.wantErr) {
				t.Errorf("ended %v (%v), want %v (%v)", end.Why, end.Err, tt.want, tt.wantErr)
			}
			if end.Why == Idle && !c.TimedOut() {
				t.Error("idle, but the call did not time out")
			}
			if got := rec.Body.String(); got != tt.wantOut {
				t.Errorf("the client got %q, want %q", got, tt.wantOut)
			}
			if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/event-stream" || rec.Header().Get("Cache-Control") != "no-cache" || !rec.Flushed {
				t.Errorf("response %d %v flushed %v", rec.Code, rec.Header(), rec.Flushed)
			}
		})
	}
}

func TestOpenStream(t *testing.T) {
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Length", "12")
	rec.Header().Set("X-Accel-Buffering", "no")
	st := OpenStream(rec, http.StatusAccepted)
	if err := st.Line("retry: 500"); err != nil {
		t.Fatal(err)
	}
	if err := st.Event([]string{"id: 7", "event: message"}, []byte("a\nb")); err != nil {
		t.Fatal(err)
	}
	want := "retry: 500\nid: 7\nevent: message\ndata: a\ndata: b\n\n"
	if rec.Code != http.StatusAccepted || rec.Header().Get("Content-Length") != "" || rec.Header().Get("X-Accel-Buffering") != "no" || rec.Body.String() != want {
		t.Errorf("%d %v %q, want %q", rec.Code, rec.Header(), rec.Body.String(), want)
	}
}

// noFlush is a ResponseWriter that cannot flush.
type noFlush struct{ http.ResponseWriter }

func TestStreamWithoutFlush(t *testing.T) {
	rec := httptest.NewRecorder()
	st := OpenStream(noFlush{rec}, http.StatusOK)
	if err := st.Event(nil, []byte("x")); err != nil {
		t.Fatalf("a writer that cannot flush: %v", err)
	}
	if rec.Body.String() != "data: x\n\n" {
		t.Errorf("%q", rec.Body.String())
	}
}

// FuzzRelay: whatever the upstream sends, the relay ends at the end of
// its stream, hands the events on in order within the bound, relays
// comments only when asked, writes nothing of its own, and what a
// handler passing every event on writes is what the client reads back.
func FuzzRelay(f *testing.F) {
	if seed, err := os.ReadFile(filepath.Join("testdata", "upstream.sse")); err == nil {
		f.Add(seed, uint16(200), true)
	}
	f.Add([]byte(": c\n\nid: 1\nevent: message\ndata: {}\n\ndata: a\ndata: b\n\nretry: 5\n\n"), uint16(8), false)
	f.Add([]byte("data: "+strings.Repeat("x", 40)+"\n\ndata: y\n\n"), uint16(16), true)
	f.Fuzz(func(t *testing.T, b []byte, max uint16, keepAlive bool) {
		if max == 0 {
			return
		}
		// The model: the stream read alone, what the relay must write.
		var want bytes.Buffer // what the client must get
		var model []Event     // the events with data to hand on
		rd := sse.NewReader(bytes.NewReader(b), int(max))
		for {
			ev, err := rd.Next()
			if err != nil {
				break
			}
			switch {
			case ev.Comment != "":
				if keepAlive {
					want.WriteString(ev.Comment + "\n")
				}
			case ev.HasData && !ev.TooLong:
				model = append(model, ev)
				_ = sse.Write(&want, ev.Fields, ev.Data)
			}
		}
		c := Start(context.Background(), time.Minute)
		defer c.Done()
		rec := httptest.NewRecorder()
		st := OpenStream(rec, http.StatusOK)
		var handed []Event
		end := st.Relay(c, bytes.NewReader(b), Events{Max: int(max), Idle: time.Minute, KeepAlive: keepAlive}, func(ev Event) error {
			if ev.Comment != "" {
				t.Fatalf("a comment reached the handler: %q", ev.Comment)
			}
			if len(ev.Data) > int(max) || ev.TooLong && ev.Data != nil {
				t.Fatalf("an event over the bound %d: %d bytes, too long %v", max, len(ev.Data), ev.TooLong)
			}
			if !ev.HasData || ev.TooLong {
				return nil
			}
			handed = append(handed, ev)
			return st.Event(ev.Fields, ev.Data)
		})
		if end.Why != EOF {
			t.Fatalf("ended %v (%v), want EOF", end.Why, end.Err)
		}
		if len(handed) != len(model) {
			t.Fatalf("%d events handed on, want %d", len(handed), len(model))
		}
		if got := rec.Body.String(); got != want.String() {
			t.Fatalf("the client got %q, want %q", got, want.String())
		}
		back := sse.NewReader(strings.NewReader(want.String()), 1<<20)
		for i, ev := range model {
			r, err := back.Next()
			for err == nil && r.Comment != "" {
				r, err = back.Next()
			}
			if err != nil || r.ID != ev.ID || r.Type != ev.Type || !bytes.Equal(r.Data, ev.Data) {
				t.Fatalf("event %d read back as %+v (%v), handed on %+v", i, r, err, ev)
			}
		}
	})
}
