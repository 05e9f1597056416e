package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/sse"
)

// Defaults of the runs stream (GET /api/runs/stream).
const (
	// DefaultRunsStreams bounds the streams open at once; one more is
	// refused with 503 and Retry-After.
	DefaultRunsStreams = 64
	// DefaultRunsPoll is how often the feed reads the store for new
	// records while a stream is open.
	DefaultRunsPoll = 250 * time.Millisecond
	// runsHeartbeat is the interval of the comment line that keeps an
	// idle stream (and the proxies on its way) alive.
	runsHeartbeat = 15 * time.Second
	// streamBuffer is the events one stream may fall behind by; past it
	// the stream ends with a "lagged" event (the client reconnects and
	// pages /api/runs for what it missed).
	streamBuffer = 256
	// feedBatch bounds the records one poll reads; a poll that reads that
	// many polls again at once.
	feedBatch = 1000
	// streamWriteTimeout bounds one write to a stream's client.
	streamWriteTimeout = 30 * time.Second
)

// runsFeed reads the records recorded since it started from the store and
// hands each to the open streams whose filters it matches. It polls the
// store itself (an oldest-first scan after the last record it read, every
// poll interval, one scan for all streams, no read transaction held between
// polls), so it sees the records of every process writing the store, not
// only this one's. It runs while at least one stream is open.
type runsFeed struct {
	store audit.Store
	poll  time.Duration
	max   int
	done  <-chan struct{} // closed when the server shuts down
	logf  func(string, ...any)
	beat  time.Duration // runsHeartbeat; tests shorten it

	mu      sync.Mutex
	subs    map[*runsSub]struct{}
	running bool
	cursor  string // the last record read; "" before any (an empty store)
}

// runsSub is one open stream.
type runsSub struct {
	match  func(*audit.Record) bool // used by the feed's goroutine only
	events chan []byte              // encoded events
	lagged chan struct{}            // closed when events overflowed
	behind bool                     // lagged is closed; the feed's goroutine only
}

func newRunsFeed(store audit.Store, poll time.Duration, max int, done <-chan struct{}) *runsFeed {
	if poll <= 0 {
		poll = DefaultRunsPoll
	}
	if max <= 0 {
		max = DefaultRunsStreams
	}
	return &runsFeed{store: store, poll: poll, max: max, done: done, subs: map[*runsSub]struct{}{},
		beat: runsHeartbeat, logf: func(f string, a ...any) { slog.Warn(fmt.Sprintf(f, a...)) }}
}

var (
	errTooManyStreams = errors.New("too many streams")
	errShuttingDown   = errors.New("the server is shutting down")
)

// subscribe opens a stream of the records matching q recorded from now on:
// every record committed after subscribe returns reaches it (if it keeps
// up). The first stream starts the feed at the newest record.
func (f *runsFeed) subscribe(ctx context.Context, q audit.Query) (*runsSub, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.done:
		return nil, errShuttingDown
	default:
	}
	if len(f.subs) >= f.max {
		return nil, errTooManyStreams
	}
	if !f.running {
		// Where the feed starts, read before the stream is answered: a
		// record recorded once the client has its answer comes after it.
		newest, err := audit.Collect(ctx, f.store, audit.Query{}, 1)
		if err != nil {
			return nil, err
		}
		f.cursor = ""
		if len(newest) == 1 {
			f.cursor = newest[0].ID
		}
		f.running = true
		go f.run()
	}
	s := &runsSub{match: q.Matcher(), events: make(chan []byte, streamBuffer), lagged: make(chan struct{})}
	f.subs[s] = struct{}{}
	return s, nil
}

func (f *runsFeed) unsubscribe(s *runsSub) {
	f.mu.Lock()
	delete(f.subs, s)
	f.mu.Unlock()
}

// run polls until no stream is open (or the server shuts down).
func (f *runsFeed) run() {
	t := time.NewTicker(f.poll)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-f.done:
			f.mu.Lock()
			f.running = false
			f.mu.Unlock()
			return
		}
		for f.pollOnce() == feedBatch {
		}
		f.mu.Lock()
		if len(f.subs) == 0 {
			f.running = false
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
	}
}

// pollOnce reads up to feedBatch new records and hands them out; it returns
// how many it read.
func (f *runsFeed) pollOnce() int {
	f.mu.Lock()
	cursor := f.cursor
	f.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	recs, err := audit.Collect(ctx, f.store, audit.Query{Oldest: true, After: cursor}, feedBatch)
	if errors.Is(err, audit.ErrUnknownCursor) {
		// The record the feed was at is gone (pruned): start again at the
		// newest. Records between are not streamed.
		f.logf("runs stream: the record the feed was at (%s) is gone; continuing from the newest", cursor)
		newest, err := audit.Collect(ctx, f.store, audit.Query{}, 1)
		if err == nil && len(newest) == 1 {
			f.mu.Lock()
			f.cursor = newest[0].ID
			f.mu.Unlock()
		}
		return 0
	}
	if err != nil {
		f.logf("runs stream: reading the trace: %v", err)
		return 0
	}
	if len(recs) == 0 {
		return 0
	}
	// The streams to serve are taken after the scan: a stream opened
	// before a record it read was committed is among them.
	f.mu.Lock()
	f.cursor = recs[len(recs)-1].ID
	subs := make([]*runsSub, 0, len(f.subs))
	for s := range f.subs {
		subs = append(subs, s)
	}
	f.mu.Unlock()
	for i := range recs {
		var ev []byte
		for _, s := range subs {
			if !s.match(&recs[i]) {
				continue
			}
			if ev == nil {
				if ev, err = encodeRunEvent(&recs[i]); err != nil {
					f.logf("runs stream: encoding record %s: %v", recs[i].ID, err)
					break
				}
			}
			if s.behind {
				continue // it ends with the events before the first it missed
			}
			select {
			case s.events <- ev:
			default:
				s.behind = true
				close(s.lagged)
			}
		}
	}
	return len(recs)
}

// encodeRunEvent is one record as an SSE event: id: the record's id,
// event: run, data: the record's JSON (one line).
func encodeRunEvent(r *audit.Record) ([]byte, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fields := []string{"event: run"}
	if !strings.ContainsAny(r.ID, "\r\n") {
		fields = []string{"id: " + r.ID, "event: run"}
	}
	if err := sse.Write(&b, fields, data); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// streamHandler serves GET /api/runs/stream: the records recorded from now
// on that match the filters of /api/runs (no cursor, no limit), as
// Server-Sent Events — "event: run" with the record's id as the event id
// and its JSON as data; a ": keepalive" comment every 15 s; a last
// "event: lagged" if the client falls streamBuffer records behind. It
// ends when the client goes away or the server shuts down.
func streamHandler(f *runsFeed) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q, _, err := parseRunsQuery(r.URL.Query(), false, time.Now())
		if err != nil {
			httpError(w, http.StatusBadRequest, err.Error())
			return
		}
		q.Tenant = warden.PrincipalFrom(r.Context()).Tenant
		if f.store == nil {
			httpError(w, http.StatusServiceUnavailable, "no trace store")
			return
		}
		s, err := f.subscribe(r.Context(), q)
		if errors.Is(err, errTooManyStreams) {
			w.Header().Set("Retry-After", "5")
			httpError(w, http.StatusServiceUnavailable, fmt.Sprintf("too many runs streams open (%d); try again later", f.max))
			return
		}
		if errors.Is(err, errShuttingDown) {
			httpError(w, http.StatusServiceUnavailable, err.Error())
			return
		}
		if err != nil {
			httpError(w, http.StatusInternalServerError, "reading the trace: "+err.Error())
			return
		}
		defer f.unsubscribe(s)
		rc := http.NewResponseController(w)
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		w.WriteHeader(http.StatusOK)
		write := func(b []byte) bool {
			_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout)) // not every writer has deadlines
			if _, err := w.Write(b); err != nil {
				return false
			}
			return rc.Flush() == nil
		}
		// The subscription is in place: say so, so a client knows that
		// what is recorded from now on reaches it.
		if !write([]byte(": subscribed\n\n")) {
			return
		}
		beat := time.NewTicker(f.beat)
		defer beat.Stop()
		for {
			select {
			case ev := <-s.events:
				if !write(ev) {
					return
				}
			case <-beat.C:
				if !write([]byte(": keepalive\n\n")) {
					return
				}
			case <-s.lagged:
				// Send what was buffered, then say the stream ends here.
				for len(s.events) > 0 {
					if !write(<-s.events) {
						return
					}
				}
				var b strings.Builder
				_ = sse.Write(&b, []string{"event: lagged"}, []byte(fmt.Sprintf(
					`{"error":"the stream fell more than %d records behind and ends here; reconnect, and page /api/runs for what was missed"}`, streamBuffer)))
				write([]byte(b.String()))
				return
			case <-r.Context().Done():
				return
			case <-f.done:
				return
			}
		}
	}
}
