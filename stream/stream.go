// Package stream publishes the trace to NATS JetStream: the decision stream
// of docs/scaling.md ("The decision stream").
//
// The store is the outbox. A Publisher reads the records after its cursor,
// oldest first, publishes each to <subject>.<tenant or _>.<surface>.<decision>
// with the record's JSON as the body and its id as Nats-Msg-Id, waits for
// JetStream's acknowledgements and then stores the last acknowledged record
// as its cursor (audit.CursorStore). Nothing is published from the
// decision path: NATS being slow or down never delays or denies a decision,
// it only makes the lag grow. A record is published at least once across a
// kill -9 (the cursor is stored only after the acknowledgement) and NATS
// outages (the publisher retries from its cursor); JetStream's
// de-duplication by Nats-Msg-Id within the stream's duplicate window makes
// that once, and since the cursor is durable a restarted publisher never
// republishes a record older than it.
package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Defaults of Options (and of the config's stream.nats section).
const (
	DefaultStream  = "WARDEN"
	DefaultSubject = "warden.decisions"
	// DefaultBatch bounds the records read from the store per pass and the
	// publishes awaiting their acknowledgement at once.
	DefaultBatch = 256
	// DefaultPoll is how often an idle publisher looks for new records.
	DefaultPoll = 200 * time.Millisecond
	// DefaultTimeout bounds connecting, one batch's acknowledgements, and
	// each JetStream API call.
	DefaultTimeout = 5 * time.Second
	// DefaultRetry is the first wait after a failure; it doubles up to
	// MaxRetry while failures repeat.
	DefaultRetry = 500 * time.Millisecond
	MaxRetry     = 10 * time.Second
	// DefaultDuplicates is the de-duplication window of a stream the
	// publisher creates (JetStream's own default).
	DefaultDuplicates = 2 * time.Minute
	// DefaultLagLimit bounds how many records a lag count reads (a count
	// reads whole records, ~0.2 s per 100k with SQLite, and runs at each
	// retry while NATS is down): a larger backlog is reported as at least
	// this many, Capped. Lag.Seconds stays exact.
	DefaultLagLimit = 100_000
	// DefaultLeaseTTL is how long a publishing lease lasts unrenewed
	// (Options.Lease).
	DefaultLeaseTTL = 10 * time.Second
	// measureEvery is how often a publisher working through a backlog
	// counts it.
	measureEvery = time.Second
)

// Store is what a Publisher reads and where it keeps its cursor.
type Store interface {
	audit.Store
	audit.CursorStore
}

// Options configure a Publisher. Zero fields take the defaults above.
type Options struct {
	// URL is the NATS server, e.g. nats://127.0.0.1:4222 (required).
	URL string
	// Stream is the JetStream stream, created if absent with the subjects
	// Subject.> and DefaultDuplicates.
	Stream string
	// Subject is the prefix of the records' subjects.
	Subject string
	// Name names the cursor in the store (default "nats:" + Stream).
	Name string
	// Batch, Poll, Timeout, Retry and LagLimit: see the defaults.
	Batch    int
	Poll     time.Duration
	Timeout  time.Duration
	Retry    time.Duration
	LagLimit int
	// Lease makes the publishers of a fleet sharing one store take turns:
	// only the holder of a lease in a JetStream key-value bucket
	// (WARDEN_LEASES, key Name) publishes, the others wait and take over
	// within DefaultLeaseTTL if it stops. Off for a store only this
	// process writes (SQLite).
	Lease bool
	// Holder names this publisher in the lease's value (instance.id; ""
	// hostname/pid), for operators: the lease itself is held by revision,
	// so two publishers with one name still never both hold it.
	Holder string
	// Logf, when set, reports connection changes and failures (never a
	// record's content).
	Logf func(format string, args ...any)
	// Now is the clock (tests); nil: time.Now.
	Now func() time.Time
}

func (o *Options) fill() error {
	if o.URL == "" {
		return errors.New("stream: a NATS URL is required")
	}
	if o.Stream == "" {
		o.Stream = DefaultStream
	}
	if o.Subject == "" {
		o.Subject = DefaultSubject
	}
	if err := ValidStreamName(o.Stream); err != nil {
		return err
	}
	if err := ValidSubject(o.Subject); err != nil {
		return err
	}
	if o.Name == "" {
		o.Name = "nats:" + o.Stream
	}
	if o.Batch <= 0 {
		o.Batch = DefaultBatch
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Retry <= 0 {
		o.Retry = DefaultRetry
	}
	if o.LagLimit <= 0 {
		o.LagLimit = DefaultLagLimit
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

// ValidStreamName reports whether s can name a JetStream stream: letters,
// digits, '-' and '_', at most 255 bytes.
func ValidStreamName(s string) error {
	if s == "" || len(s) > 255 {
		return fmt.Errorf("stream: a stream name must be 1 to 255 bytes, got %d", len(s))
	}
	for _, r := range s {
		if !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return fmt.Errorf("stream: stream name %q: only letters, digits, '-' and '_'", s)
		}
	}
	return nil
}

// ValidSubject reports whether s is a literal NATS subject prefix: tokens
// separated by '.', none empty, without wildcards or white space.
func ValidSubject(s string) error {
	if s == "" || len(s) > 255 {
		return fmt.Errorf("stream: a subject must be 1 to 255 bytes, got %d", len(s))
	}
	for _, tok := range strings.Split(s, ".") {
		if tok == "" || tok == "*" || tok == ">" || strings.ContainsAny(tok, " \t\r\n*>") {
			return fmt.Errorf("stream: subject %q: expected tokens separated by '.', without wildcards or white space", s)
		}
	}
	return nil
}

// maxToken bounds one subject token made from a record's field.
const maxToken = 64

// Token makes a record's field one NATS subject token: "" becomes "_";
// every byte but a letter, digit, '-' or '_' becomes '_'; at most 64 bytes.
func Token(s string) string {
	if s == "" {
		return "_"
	}
	if len(s) > maxToken {
		s = s[:maxToken]
	}
	b := []byte(s)
	for i, c := range b {
		if !(c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b[i] = '_'
		}
	}
	return string(b)
}

// Subject is the subject record r is published to under prefix.
func Subject(prefix string, r *audit.Record) string {
	return prefix + "." + Token(r.Tenant) + "." + Token(r.Surface) + "." + Token(r.Decision)
}

// Lag is how far the stream is behind the trace.
type Lag struct {
	// Records not yet acknowledged by JetStream (at least this many when
	// Capped: the count stopped at Options.LagLimit).
	Records int64 `json:"records"`
	Capped  bool  `json:"capped,omitempty"`
	// Seconds since the oldest unacknowledged record was decided; 0 when
	// none waits.
	Seconds float64 `json:"seconds"`
	// Connected reports whether NATS answers; Publishing whether this
	// process publishes (false while another replica holds the lease).
	Connected  bool `json:"connected"`
	Publishing bool `json:"publishing"`
	// Acked is the last record acknowledged (the cursor).
	Acked string `json:"acked"`
	// Published counts the records this process had acknowledged.
	Published uint64 `json:"published"`
	// Error is the latest failure, "" after a success.
	Error string `json:"error,omitempty"`
}

// Publisher publishes a store's records to JetStream. Run it once.
type Publisher struct {
	store Store
	o     Options

	mu       sync.Mutex
	lag      Lag       // Seconds is computed by Lag from oldest
	oldest   time.Time // the oldest unacknowledged record's time; zero: none waits
	measured time.Time // when measure last counted the backlog

	// Owned by Run.
	nc    *nats.Conn
	js    jetstream.JetStream
	lease *lease
}

// New returns a Publisher of store's records; Run starts it.
func New(store Store, o Options) (*Publisher, error) {
	if store == nil {
		return nil, errors.New("stream: no store")
	}
	if err := o.fill(); err != nil {
		return nil, err
	}
	return &Publisher{store: store, o: o}, nil
}

// SetHolder sets Options.Holder; call it before Run.
func (p *Publisher) SetHolder(name string) { p.o.Holder = name }

// Lag returns the stream's lag: the backlog as last counted, its age as
// of now.
func (p *Publisher) Lag() Lag {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.lag
	l.Seconds = 0
	if l.Records > 0 && !p.oldest.IsZero() {
		l.Seconds = max(p.o.Now().Sub(p.oldest).Seconds(), 0)
	}
	return l
}

func (p *Publisher) setLag(fn func(l *Lag)) {
	p.mu.Lock()
	fn(&p.lag)
	p.mu.Unlock()
}

// Run publishes until ctx is done, then closes its NATS connection and
// returns nil. Failures (NATS down, a store error) are retried with a
// growing wait and reported in Lag and through Logf; they never end Run.
func (p *Publisher) Run(ctx context.Context) error {
	defer p.disconnect()
	wait := time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		idle, err := p.pass(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			p.fail(ctx, err)
			if wait < p.o.Retry {
				wait = p.o.Retry
			} else if wait *= 2; wait > MaxRetry {
				wait = MaxRetry
			}
		case idle:
			wait = p.o.Poll
		default:
			wait = 0
		}
	}
}

// fail records err and measures the lag without publishing.
func (p *Publisher) fail(ctx context.Context, err error) {
	msg := err.Error()
	p.mu.Lock()
	changed := p.lag.Error != msg
	p.lag.Error = msg
	p.mu.Unlock()
	if changed {
		p.o.Logf("decision stream: %v (retrying)", err)
	}
	if cur, cerr := p.store.StreamCursor(ctx, p.o.Name); cerr == nil {
		p.measure(ctx, cur)
	}
}

// pass publishes one batch; idle reports that none was waiting.
func (p *Publisher) pass(ctx context.Context) (idle bool, err error) {
	if err := p.connect(ctx); err != nil {
		return false, err
	}
	if p.lease != nil {
		held, err := p.lease.hold(ctx)
		p.setLag(func(l *Lag) { l.Publishing = held })
		if err != nil {
			return false, err
		}
		if !held {
			cur, err := p.store.StreamCursor(ctx, p.o.Name)
			if err == nil {
				p.measure(ctx, cur)
			}
			p.setLag(func(l *Lag) { l.Error = "" })
			return true, err
		}
	}
	cur, err := p.store.StreamCursor(ctx, p.o.Name)
	if err != nil {
		return false, fmt.Errorf("read the cursor: %w", err)
	}
	recs, err := p.next(ctx, cur)
	if err != nil {
		return false, err
	}
	if len(recs) == 0 {
		p.setLag(func(l *Lag) { *l = Lag{Connected: true, Publishing: true, Acked: cur, Published: l.Published} })
		return true, nil
	}
	acked, perr := p.publish(ctx, recs)
	if acked > 0 {
		last := recs[acked-1].ID
		if p.lease != nil && !p.lease.valid() {
			return false, errors.New("lost the publishing lease before storing the cursor")
		}
		if err := p.store.SetStreamCursor(ctx, p.o.Name, last); err != nil {
			return false, fmt.Errorf("store the cursor: %w", err)
		}
		cur = last
		p.setLag(func(l *Lag) { l.Published += uint64(acked); l.Acked = last })
	}
	if perr != nil {
		return false, perr
	}
	if len(recs) < p.o.Batch {
		p.setLag(func(l *Lag) { *l = Lag{Connected: true, Publishing: true, Acked: cur, Published: l.Published} })
		return false, nil
	}
	// More are waiting. Counting them reads the whole backlog, so it is
	// done at most once per measureEvery; in between the count goes down
	// by what was acknowledged and the age is the last acknowledged
	// record's (a lower bound).
	if p.o.Now().Sub(p.measured) >= measureEvery {
		p.measure(ctx, cur)
	} else {
		next := recs[len(recs)-1].Time
		p.setLag(func(l *Lag) { l.Records = max(l.Records-int64(acked), 1); p.oldest = next })
	}
	p.setLag(func(l *Lag) { l.Error = "" })
	return false, nil
}

// next reads up to Batch records after cur, oldest first. A cursor the
// store no longer holds (retention pruned it) restarts at the oldest
// record: every record older than it has been pruned as well.
func (p *Publisher) next(ctx context.Context, cur string) ([]audit.Record, error) {
	q := audit.Query{After: cur, Oldest: true}
	recs, err := audit.Collect(ctx, p.store, q, p.o.Batch)
	if errors.Is(err, audit.ErrUnknownCursor) {
		p.o.Logf("decision stream: the cursor record %s is no longer in the trace (pruned); continuing from the oldest record", cur)
		recs, err = audit.Collect(ctx, p.store, audit.Query{Oldest: true}, p.o.Batch)
	}
	if err != nil {
		return nil, fmt.Errorf("read the trace: %w", err)
	}
	return recs, nil
}

// measure counts the records after cur (up to LagLimit) and dates the
// oldest of them.
func (p *Publisher) measure(ctx context.Context, cur string) {
	p.measured = p.o.Now()
	var n int64
	var oldest time.Time
	err := p.store.Scan(ctx, audit.Query{After: cur, Oldest: true}, func(r *audit.Record) bool {
		if n == 0 {
			oldest = r.Time
		}
		n++
		return n < int64(p.o.LagLimit)
	})
	if err != nil && !errors.Is(err, audit.ErrUnknownCursor) {
		return
	}
	p.setLag(func(l *Lag) {
		l.Records, l.Capped, l.Acked = n, n >= int64(p.o.LagLimit), cur
		p.oldest = oldest // zero when n == 0
	})
}

// publish sends recs asynchronously and waits for their acknowledgements;
// acked is the length of the prefix of recs JetStream acknowledged.
func (p *Publisher) publish(ctx context.Context, recs []audit.Record) (acked int, err error) {
	futs := make([]jetstream.PubAckFuture, 0, len(recs))
	var sendErr error
	for i := range recs {
		msg, err := p.message(&recs[i])
		if err != nil {
			sendErr = err
			break
		}
		f, err := p.js.PublishMsgAsync(msg, jetstream.WithMsgID(recs[i].ID), jetstream.WithExpectStream(p.o.Stream))
		if err != nil {
			sendErr = fmt.Errorf("publish: %w", err)
			break
		}
		futs = append(futs, f)
	}
	deadline := time.NewTimer(p.o.Timeout)
	defer deadline.Stop()
	for _, f := range futs {
		select {
		case <-f.Ok():
			acked++
			continue
		case err := <-f.Err():
			return acked, fmt.Errorf("publish: %w", err)
		case <-deadline.C:
			return acked, fmt.Errorf("publish: no acknowledgement within %s", p.o.Timeout)
		case <-ctx.Done():
			return acked, ctx.Err()
		}
	}
	return acked, sendErr
}

// TruncatedHeader names the fields left out of a record too large for the
// server's max_payload (input, output, views, results, sealed),
// comma-separated.
const TruncatedHeader = "Warden-Truncated"

// message is r's message: its JSON, as GET /api/runs/{id} gives it. A
// record larger than the server's max_payload is sent without its input,
// output, views, results and sealed originals, named in the Warden-Truncated header, so that
// one large record does not stop the stream.
func (p *Publisher) message(r *audit.Record) (*nats.Msg, error) {
	body, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode record %s: %w", r.ID, err)
	}
	msg := nats.NewMsg(Subject(p.o.Subject, r))
	if max := p.nc.MaxPayload(); max > 0 && int64(len(body)) > max-1024 {
		c := *r
		c.Input, c.Output, c.Views, c.Results, c.Sealed = nil, nil, nil, nil, nil
		if body, err = json.Marshal(&c); err != nil {
			return nil, fmt.Errorf("encode record %s: %w", r.ID, err)
		}
		msg.Header.Set(TruncatedHeader, "input,output,views,results,sealed")
	}
	msg.Data = body
	return msg, nil
}

// connect dials NATS and makes sure the stream exists, once per
// connection.
func (p *Publisher) connect(ctx context.Context) error {
	if p.nc != nil && p.nc.IsConnected() {
		return nil
	}
	if p.nc != nil && !p.nc.IsClosed() {
		// Reconnecting on its own: its buffered publishes wait for it.
		p.setLag(func(l *Lag) { l.Connected = false })
		return errors.New("NATS connection lost; reconnecting")
	}
	nc, err := nats.Connect(p.o.URL,
		nats.Name("warden decision stream"),
		nats.Timeout(p.o.Timeout),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(p.o.Retry),
		nats.ReconnectBufSize(8<<20),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			p.setLag(func(l *Lag) { l.Connected = false })
			if err != nil {
				p.o.Logf("decision stream: NATS disconnected: %v", err)
			}
		}),
		nats.ReconnectHandler(func(*nats.Conn) {
			p.setLag(func(l *Lag) { l.Connected = true })
			p.o.Logf("decision stream: NATS reconnected")
		}),
	)
	if err != nil {
		p.setLag(func(l *Lag) { l.Connected = false })
		return fmt.Errorf("connect to NATS: %w", err)
	}
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(p.o.Batch), jetstream.WithPublishAsyncTimeout(p.o.Timeout))
	if err != nil {
		nc.Close()
		return fmt.Errorf("JetStream: %w", err)
	}
	if err := p.ensureStream(ctx, js); err != nil {
		nc.Close()
		return err
	}
	if p.o.Lease {
		l, err := newLease(ctx, js, p.o)
		if err != nil {
			nc.Close()
			return err
		}
		p.lease = l
	}
	p.nc, p.js = nc, js
	p.setLag(func(l *Lag) { l.Connected = true })
	p.o.Logf("decision stream: publishing to JetStream stream %s, subjects %s.>", p.o.Stream, p.o.Subject)
	return nil
}

// ensureStream creates the stream if absent; one that exists is used as
// it is (an operator may have set its retention and replicas).
func (p *Publisher) ensureStream(ctx context.Context, js jetstream.JetStream) error {
	cctx, cancel := context.WithTimeout(ctx, p.o.Timeout)
	defer cancel()
	s, err := js.Stream(cctx, p.o.Stream)
	if err == nil {
		subj := p.o.Subject + ".>"
		for _, have := range s.CachedInfo().Config.Subjects {
			if have == subj || have == ">" || have == p.o.Subject+".*.*.*" {
				return nil
			}
		}
		p.o.Logf("decision stream: stream %s exists without the subjects %s; publishes may not be stored there", p.o.Stream, subj)
		return nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("look up stream %s: %w", p.o.Stream, err)
	}
	_, err = js.CreateStream(cctx, jetstream.StreamConfig{
		Name:       p.o.Stream,
		Subjects:   []string{p.o.Subject + ".>"},
		Storage:    jetstream.FileStorage,
		Duplicates: DefaultDuplicates,
	})
	if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return fmt.Errorf("create stream %s: %w", p.o.Stream, err)
	}
	return nil
}

func (p *Publisher) disconnect() {
	if p.nc == nil {
		return
	}
	if p.lease != nil {
		ctx, cancel := context.WithTimeout(context.Background(), p.o.Timeout)
		p.lease.release(ctx)
		cancel()
	}
	p.nc.Close()
	p.nc, p.js = nil, nil
}
