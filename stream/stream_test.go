package stream_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/pipeline"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/sqlite"
	"github.com/wardenhq/warden/stream"
)

// natsURL is WARDEN_NATS_URL, or the test is skipped.
func natsURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("WARDEN_NATS_URL")
	if u == "" {
		t.Skip("WARDEN_NATS_URL is not set: skipping the NATS JetStream tests")
	}
	return u
}

var seq atomic.Int64

// names returns a stream name and subject prefix of this test alone, and
// deletes the stream (and the lease bucket's key) when the test ends.
func names(t testing.TB, url string) (string, string) {
	t.Helper()
	n := fmt.Sprintf("T%d_%d", time.Now().UnixNano(), seq.Add(1))
	t.Cleanup(func() {
		nc, err := nats.Connect(url, nats.Timeout(2*time.Second))
		if err != nil {
			return
		}
		defer nc.Close()
		js, _ := jetstream.New(nc)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = js.DeleteStream(ctx, n)
	})
	return n, "wt." + strings.ToLower(n)
}

func openStore(t testing.TB, dir string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// record stores n records with a spread of tenants, surfaces and decisions.
func record(t testing.TB, s audit.Store, from, n int) []audit.Record {
	t.Helper()
	tenants := []string{"", "acme", "big.corp*"}
	surfaces := []string{"aos", "mcp", "hooks"}
	decisions := []string{"allow", "deny", "ask"}
	out := make([]audit.Record, 0, n)
	for i := from; i < from+n; i++ {
		r := audit.Record{ID: fmt.Sprintf("r%06d", i), Time: time.Now().UTC(), Event: "steps/toolCallRequest",
			Surface: surfaces[i%3], Decision: decisions[(i/3)%3], Tenant: tenants[(i/9)%3],
			SessionID: "s", Input: json.RawMessage(`{"n":` + fmt.Sprint(i) + `}`), Results: []warden.Result{}}
		if err := s.Record(context.Background(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// run starts p and returns a stop that waits for Run to return.
func run(p *stream.Publisher) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = p.Run(ctx); close(done) }()
	return func() { cancel(); <-done }
}

// waitFor polls cond for up to d.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stored reads every message of the stream.
func stored(t testing.TB, url, name string) []jetstream.Msg {
	t.Helper()
	nc, err := nats.Connect(url, nats.Timeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	total := int(info.State.Msgs)
	if total == 0 {
		return nil
	}
	c, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var out []jetstream.Msg
	for len(out) < total {
		b, err := c.Fetch(total-len(out), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range b.Messages() {
			out = append(out, m)
		}
		if b.Error() != nil {
			t.Fatal(b.Error())
		}
	}
	return out
}

// ids are the Nats-Msg-Ids of msgs, checking each is there once.
func ids(t testing.TB, msgs []jetstream.Msg) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for _, m := range msgs {
		id := m.Headers().Get(jetstream.MsgIDHeader)
		if seen[id] {
			t.Errorf("record %s is on the stream twice", id)
		}
		seen[id] = true
	}
	return seen
}

func TestPublish(t *testing.T) {
	url := natsURL(t)
	name, subj := names(t, url)
	s := openStore(t, t.TempDir())
	recs := record(t, s, 0, 30)
	p, err := stream.New(s, stream.Options{URL: url, Stream: name, Subject: subj, Batch: 7})
	if err != nil {
		t.Fatal(err)
	}
	stop := run(p)
	defer stop()
	waitFor(t, 10*time.Second, "30 records acknowledged", func() bool { return p.Lag().Published == 30 })
	msgs := stored(t, url, name)
	if len(msgs) != len(recs) {
		t.Fatalf("%d messages on the stream, want %d", len(msgs), len(recs))
	}
	for i, m := range msgs {
		r := recs[i]
		if got := m.Headers().Get("Nats-Msg-Id"); got != r.ID {
			t.Errorf("message %d: Nats-Msg-Id %q, want %q", i, got, r.ID)
		}
		tenant := r.Tenant
		if tenant == "" {
			tenant = "_"
		}
		tenant = strings.NewReplacer(".", "_", "*", "_").Replace(tenant)
		if want := subj + "." + tenant + "." + r.Surface + "." + r.Decision; m.Subject() != want {
			t.Errorf("message %d: subject %q, want %q", i, m.Subject(), want)
		}
		// The body is the record as GET /api/runs/{id} gives it: the
		// stored record, hash chain included.
		got, err := audit.Collect(context.Background(), s, audit.Query{ID: r.ID}, 1)
		if err != nil || len(got) != 1 {
			t.Fatal(err)
		}
		want, _ := json.Marshal(&got[0])
		if string(m.Data()) != string(want) {
			t.Errorf("message %d: body\n%s\nwant\n%s", i, m.Data(), want)
		}
	}
	cur, err := s.StreamCursor(context.Background(), "nats:"+name)
	if err != nil || cur != recs[len(recs)-1].ID {
		t.Errorf("cursor %q, %v; want %s", cur, err, recs[len(recs)-1].ID)
	}
	if l := p.Lag(); l.Records != 0 || !l.Connected || l.Acked != cur {
		t.Errorf("lag after catching up: %+v", l)
	}
}

// stuckCursor is a store whose cursor writes hang after the first `after`
// of them, as a process killed between JetStream's acknowledgement and the
// cursor's commit would leave it.
type stuckCursor struct {
	*sqlite.Store
	after int32
	n     atomic.Int32
	hung  chan struct{}
}

func (s *stuckCursor) SetStreamCursor(ctx context.Context, name, id string) error {
	if s.n.Add(1) > s.after {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.Store.SetStreamCursor(ctx, name, id)
}

// A publisher dropped without a clean close (its cursor write never lands,
// its connection is not drained) and a new one on the same store: every
// record ends up on the stream exactly once, and the new publisher starts
// after the acknowledged position, republishing at most the batch that was
// acknowledged but not yet stored as the cursor.
func TestRestartResumesFromCursor(t *testing.T) {
	url := natsURL(t)
	name, subj := names(t, url)
	dir := t.TempDir()
	s := openStore(t, dir)
	record(t, s, 0, 100)
	const batch = 10
	killed := &stuckCursor{Store: s, after: 3}
	p1, _ := stream.New(killed, stream.Options{URL: url, Stream: name, Subject: subj, Batch: batch})
	stop1 := run(p1)
	// 3 batches stored as the cursor, the 4th acknowledged and its cursor
	// write hanging: then the process "dies".
	waitFor(t, 10*time.Second, "the 4th batch acknowledged", func() bool { return killed.n.Load() > 3 })
	cur, _ := s.StreamCursor(context.Background(), "nats:"+name)
	if cur != "r000029" {
		t.Fatalf("cursor after 3 batches: %q, want r000029", cur)
	}
	defer stop1() // the abandoned publisher; ends with the test
	record(t, s, 100, 50)

	var scans []string
	spy := &scanSpy{Store: s, afters: &scans}
	p2, _ := stream.New(spy, stream.Options{URL: url, Stream: name, Subject: subj, Batch: batch})
	stop2 := run(p2)
	defer stop2()
	waitFor(t, 10*time.Second, "p2 catching up", func() bool {
		c, _ := s.StreamCursor(context.Background(), "nats:"+name)
		return c == "r000149"
	})
	if first := spy.first(); first != "r000029" {
		t.Errorf("p2 first read after %q, want the acknowledged position r000029", first)
	}
	if got := p2.Lag().Published; got != 120 {
		t.Errorf("p2 published %d records, want 120 (r000030..r000149; r000030..39 again, dropped as duplicates)", got)
	}
	msgs := stored(t, url, name)
	seen := ids(t, msgs)
	if len(msgs) != 150 || len(seen) != 150 {
		t.Errorf("%d messages, %d distinct ids on the stream; want 150 each", len(msgs), len(seen))
	}
}

type scanSpy struct {
	*sqlite.Store
	mu     sync.Mutex
	afters *[]string
}

func (s *scanSpy) Scan(ctx context.Context, q audit.Query, fn func(*audit.Record) bool) error {
	s.mu.Lock()
	*s.afters = append(*s.afters, q.After)
	s.mu.Unlock()
	return s.Store.Scan(ctx, q, fn)
}

func (s *scanSpy) first() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(*s.afters) == 0 {
		return "<none>"
	}
	return (*s.afters)[0]
}

// privateNATS starts a nats-server of this test's own with JetStream in a
// temporary directory, on port (0: a free one); stop kills it (SIGKILL).
func privateNATS(t testing.TB, port int, dir string) (url string, p int, stop func()) {
	t.Helper()
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/nats-server"); serr != nil {
			t.Skip("nats-server is not installed")
		}
		bin = "/usr/sbin/nats-server"
	}
	if port == 0 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	cmd := exec.Command(bin, "-a", "127.0.0.1", "-p", fmt.Sprint(port), "-js", "-sd", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	url = fmt.Sprintf("nats://127.0.0.1:%d", port)
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	t.Cleanup(stop)
	waitFor(t, 10*time.Second, "nats-server to listen", func() bool {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return url, port, stop
}

// decide makes n decisions through a Decider on s and returns their
// latencies, sorted.
func decide(t testing.TB, d *pipeline.Pipeline, n int) []time.Duration {
	t.Helper()
	lat := make([]time.Duration, 0, n)
	for i := range n {
		ev := &warden.Event{Name: "steps/toolCallRequest", Surface: warden.SurfaceAOS, RequestID: fmt.Sprint(i),
			Payload: map[string]any{"toolCallRequest": map[string]any{"toolId": "read_file"}}}
		start := time.Now()
		if _, err := d.Decide(context.Background(), ev); err != nil {
			t.Fatalf("decision %d: %v", i, err)
		}
		lat = append(lat, time.Since(start))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return lat
}

func pct(lat []time.Duration, p float64) time.Duration { return lat[int(float64(len(lat)-1)*p)] }

// NATS killed: decisions go on as before (measured: their p50 and p99
// beside a run with NATS up), the lag grows and is reported; NATS back
// (same port, same store directory): the backlog drains, each record once.
func TestOutage(t *testing.T) {
	natsURL(t)
	sd := t.TempDir()
	url, port, stop := privateNATS(t, 0, sd)
	name, subj := names(t, url)
	s := openStore(t, t.TempDir())
	d := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow), Store: s})
	p, _ := stream.New(s, stream.Options{URL: url, Stream: name, Subject: subj, Retry: 100 * time.Millisecond, Timeout: time.Second})
	stopP := run(p)
	defer stopP()
	const n = 2000
	up := decide(t, d, n)
	waitFor(t, 10*time.Second, "the first decisions published", func() bool { return p.Lag().Published == n })

	stop() // kill -9 of NATS
	down := decide(t, d, n)
	t.Logf("decisions with NATS up:   p50 %v p99 %v", pct(up, .5), pct(up, .99))
	t.Logf("decisions with NATS down: p50 %v p99 %v", pct(down, .5), pct(down, .99))
	if pct(down, .99) > 10*pct(up, .99)+5*time.Millisecond {
		t.Errorf("NATS down slowed decisions: p99 %v, %v with NATS up", pct(down, .99), pct(up, .99))
	}
	waitFor(t, 10*time.Second, "the lag to show the backlog", func() bool {
		l := p.Lag()
		return l.Records == n && !l.Connected && l.Error != ""
	})
	time.Sleep(1100 * time.Millisecond)
	if l := p.Lag(); l.Seconds < 1 {
		t.Errorf("lag seconds %v after >1s of outage", l.Seconds)
	}
	t.Logf("lag during the outage: %+v", p.Lag())

	back := time.Now()
	privateNATS(t, port, sd) // NATS returns
	waitFor(t, 30*time.Second, "the backlog to drain", func() bool {
		l := p.Lag()
		return l.Records == 0 && l.Connected && l.Error == ""
	})
	t.Logf("backlog of %d drained %v after NATS was restarted", n, time.Since(back).Round(time.Millisecond))
	msgs := stored(t, url, name)
	if seen := ids(t, msgs); len(msgs) != 2*n || len(seen) != 2*n {
		t.Errorf("%d messages, %d distinct ids; want %d each", len(msgs), len(seen), 2*n)
	}
}

// NATS not reachable when the publisher starts: it keeps trying, never
// fails Run, and reports the backlog.
func TestStartWithoutNATS(t *testing.T) {
	natsURL(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := openStore(t, t.TempDir())
	record(t, s, 0, 5)
	p, _ := stream.New(s, stream.Options{URL: "nats://" + addr, Retry: 50 * time.Millisecond, Timeout: 200 * time.Millisecond})
	stop := run(p)
	defer stop()
	waitFor(t, 5*time.Second, "the lag to be measured", func() bool {
		l := p.Lag()
		return l.Records == 5 && !l.Connected && l.Error != ""
	})
}

// Two publishers with Lease on one store (a fleet's shared trace): one
// publishes at a time, even under one holder name (two replicas given the
// same instance.id); the other takes over when it stops.
func TestLease(t *testing.T) {
	url := natsURL(t)
	name, subj := names(t, url)
	s := openStore(t, t.TempDir())
	record(t, s, 0, 20)
	o := stream.Options{URL: url, Stream: name, Subject: subj, Lease: true, Poll: 20 * time.Millisecond}
	o.Holder = "same-name"
	a, _ := stream.New(s, o)
	b, _ := stream.New(s, o)
	stopA := run(a)
	waitFor(t, 10*time.Second, "a publishing", func() bool { return a.Lag().Published == 20 })
	stopB := run(b)
	defer stopB()
	time.Sleep(300 * time.Millisecond)
	if b.Lag().Publishing || b.Lag().Published != 0 {
		t.Fatalf("b publishes while a holds the lease: %+v", b.Lag())
	}
	stopA() // releases the lease
	record(t, s, 20, 10)
	waitFor(t, 10*time.Second, "b taking over", func() bool { return b.Lag().Published == 10 })
	msgs := stored(t, url, name)
	if seen := ids(t, msgs); len(seen) != 30 || len(msgs) != 30 {
		t.Errorf("%d messages, %d ids; want 30", len(msgs), len(seen))
	}
}

func TestTokenAndSubject(t *testing.T) {
	for in, want := range map[string]string{"": "_", "acme": "acme", "a.b": "a_b", "x*>y z": "x__y_z",
		"ünï": "__n__", strings.Repeat("a", 100): strings.Repeat("a", 64)} {
		if got := stream.Token(in); got != want {
			t.Errorf("Token(%q) = %q, want %q", in, got, want)
		}
	}
	r := &audit.Record{Surface: "mcp", Decision: "deny"}
	if got := stream.Subject("warden.decisions", r); got != "warden.decisions._.mcp.deny" {
		t.Errorf("Subject = %q", got)
	}
	for _, bad := range []string{"", "a..b", "a.*", "a.>", "a b", ".a", "a."} {
		if stream.ValidSubject(bad) == nil {
			t.Errorf("ValidSubject(%q) = nil, want an error", bad)
		}
	}
	for _, bad := range []string{"", "a.b", "a b", strings.Repeat("x", 256)} {
		if stream.ValidStreamName(bad) == nil {
			t.Errorf("ValidStreamName(%q) = nil, want an error", bad)
		}
	}
	if _, err := stream.New(nil, stream.Options{URL: "nats://x"}); err == nil {
		t.Error("New without a store: nil error")
	}
	if _, err := stream.New(openStore(t, t.TempDir()), stream.Options{}); err == nil || !strings.Contains(err.Error(), "URL") {
		t.Errorf("New without a URL: %v", err)
	}
}

// BenchmarkPublish measures JetStream messages/s published (and
// acknowledged, the cursor stored after each batch) from a SQLite trace,
// by batch size (stream.nats.batch).
func BenchmarkPublish(b *testing.B) {
	url := natsURL(b)
	for _, batch := range []int{64, 256, 1024} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			name, subj := names(b, url)
			s := openStore(b, filepath.Join(b.TempDir(), "d"))
			record(b, s, 0, b.N)
			p, _ := stream.New(s, stream.Options{URL: url, Stream: name, Subject: subj, Batch: batch})
			b.ResetTimer()
			start := time.Now()
			stop := run(p)
			defer stop()
			for p.Lag().Published < uint64(b.N) {
				time.Sleep(time.Millisecond)
				if time.Since(start) > 5*time.Minute {
					b.Fatal(errors.New("timed out"))
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
		})
	}
}
