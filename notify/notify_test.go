package notify

import (
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/approval"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixture is the approval: its summary and reason hold what Slack needs
// escaped, and an attempted mention.
func fixture() approval.Approval {
	created := time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)
	return approval.Approval{
		ID: "ap_01HX", State: approval.ApprovalPending, Event: "tool.pre_call", Surface: "mcp",
		SessionID: "sess-7", AgentID: "builder", Tool: "run_shell",
		Summary:  `run_shell {"cmd":"rm -rf build && echo <done>"}`,
		Reason:   "shell commands need a human <!channel>",
		PolicyID: "ask-shell", Created: created, Expires: created.Add(2 * time.Minute),
		RecordID: "rec_9", Caller: "agents", Tenant: "acme", Key: "k1", Hold: true,
	}
}

const link = "https://warden.example.com/approvals/ap_01HX?tenant=acme&view=1"

// recorder collects Results.
type recorder struct {
	mu  sync.Mutex
	all []Result
	ch  chan Result
}

func newRecorder() *recorder { return &recorder{ch: make(chan Result, 1000)} }

func (r *recorder) on(res Result) {
	r.mu.Lock()
	r.all = append(r.all, res)
	r.mu.Unlock()
	r.ch <- res
}

// final waits for n final results.
func (r *recorder) final(t *testing.T, n int) []Result {
	t.Helper()
	var out []Result
	deadline := time.After(10 * time.Second)
	for len(out) < n {
		select {
		case res := <-r.ch:
			if res.Final {
				out = append(out, res)
			}
		case <-deadline:
			t.Fatalf("got %d final results, want %d (all: %+v)", len(out), n, r.results())
		}
	}
	return out
}

func (r *recorder) results() []Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Result(nil), r.all...)
}

// fast are Options for tests: short waits.
func fast(r *recorder) Options {
	return Options{Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, Timeout: 2 * time.Second, OnResult: r.on}
}

func closeNow(t *testing.T, n *Notifier) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestBodiesGolden(t *testing.T) {
	type got struct {
		path, ctype, token string
		body               []byte
	}
	var mu sync.Mutex
	seen := map[string]got{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen[r.URL.Path] = got{r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("X-Token"), b}
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	rec := newRecorder()
	n := New([]Target{
		{URL: srv.URL + "/json?sig=secret-query"},
		{URL: srv.URL + "/slack", Format: FormatSlack, Headers: map[string]string{"X-Token": "tok-secret"}},
	}, fast(rec))
	n.Notify(fixture(), link)
	res := rec.final(t, 2)
	closeNow(t, n)
	for _, r := range res {
		if r.Err != nil || r.Status != 200 || r.Attempt != 1 || r.ApprovalID != "ap_01HX" {
			t.Errorf("result %+v", r)
		}
		if strings.Contains(r.Target, "secret") || !strings.HasPrefix(r.Target, srv.URL+"/") {
			t.Errorf("result target %q", r.Target)
		}
	}
	for _, c := range []struct{ path, golden, token string }{
		{"/json", "approval.json.golden", ""},
		{"/slack", "approval.slack.golden", "tok-secret"},
	} {
		g := seen[c.path]
		if g.ctype != "application/json" || g.token != c.token {
			t.Errorf("%s: content-type %q, token %q", c.path, g.ctype, g.token)
		}
		golden(t, c.golden, g.body)
	}
}

func golden(t *testing.T, name string, b []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != strings.TrimSuffix(string(want), "\n") {
		t.Errorf("%s:\n got %s\nwant %s", name, b, want)
	}
}

func TestSlackText(t *testing.T) {
	got := SlackText(fixture(), link)
	for _, want := range []string{
		"run_shell {\"cmd\":\"rm -rf build &amp;&amp; echo &lt;done&gt;\"}",
		"asked by policy ask-shell: shell commands need a human &lt;!channel&gt;",
		"tool run_shell (tool.pre_call)", "session sess-7", "agent builder",
		"expires 2025-03-04T10:02:00Z",
		"<https://warden.example.com/approvals/ap_01HX?tenant=acme&amp;view=1|Open in warden>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "<!channel>") {
		t.Errorf("a mention got through: %s", got)
	}
	for _, c := range []struct {
		a    approval.Approval
		want string
	}{
		{approval.Approval{Summary: "two\nlines\r\u2028here"}, "warden: approval needed: two lines  here"},
		{approval.Approval{Reason: "hook asked", Event: "turn.start"}, "warden: approval needed · reason: hook asked · event turn.start"},
		{approval.Approval{PolicyID: "p", Tool: "t"}, "warden: approval needed · asked by policy p · tool t"},
	} {
		if got := SlackText(c.a, ""); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
	if got := slackURL("https://h/a b|c<d>"); got != "https://h/a%20b%7Cc%3Cd%3E" {
		t.Errorf("slackURL: %q", got)
	}
}

func TestRetryThenSuccess(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			http.Error(w, "upstream down", http.StatusInternalServerError)
			return
		}
	}))
	defer srv.Close()
	rec := newRecorder()
	n := New([]Target{{URL: srv.URL}}, fast(rec))
	n.Notify(fixture(), link)
	rec.final(t, 1)
	closeNow(t, n)
	all := rec.results()
	if len(all) != 3 || calls.Load() != 3 {
		t.Fatalf("%d results, %d calls: %+v", len(all), calls.Load(), all)
	}
	for i, r := range all {
		wantStatus, wantFinal := 500, false
		if i == 2 {
			wantStatus, wantFinal = 200, true
		}
		if r.Attempt != i+1 || r.Status != wantStatus || r.Final != wantFinal || (r.Err == nil) != wantFinal {
			t.Errorf("result %d: %+v", i, r)
		}
	}
	if !strings.Contains(all[0].Err.Error(), "HTTP 500: upstream down") {
		t.Errorf("err %v", all[0].Err)
	}
}

func TestAttemptsUsedUp(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	rec := newRecorder()
	o := fast(rec)
	o.Attempts = 3
	n := New([]Target{{URL: srv.URL}}, o)
	n.Notify(fixture(), "")
	r := rec.final(t, 1)[0]
	closeNow(t, n)
	if calls.Load() != 3 || r.Attempt != 3 || r.Status != 503 || r.Err == nil {
		t.Fatalf("calls %d, final %+v", calls.Load(), r)
	}
}

func TestRetryAfter(t *testing.T) {
	var mu sync.Mutex
	var times []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		times = append(times, time.Now())
		first := len(times) == 1
		mu.Unlock()
		if first {
			w.Header().Set("Retry-After", r.URL.Query().Get("after"))
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	for _, c := range []struct {
		after    string
		max      time.Duration
		min, lim time.Duration
	}{
		{"1", 5 * time.Second, 900 * time.Millisecond, 4 * time.Second}, // honoured
		{"3600", 50 * time.Millisecond, 0, 900 * time.Millisecond},      // capped by MaxBackoff
	} {
		mu.Lock()
		times = nil
		mu.Unlock()
		rec := newRecorder()
		o := fast(rec)
		o.MaxBackoff = c.max
		n := New([]Target{{URL: srv.URL + "/?after=" + c.after}}, o)
		n.Notify(fixture(), "")
		r := rec.final(t, 1)[0]
		closeNow(t, n)
		mu.Lock()
		if len(times) != 2 || r.Err != nil || r.Attempt != 2 {
			t.Fatalf("after %s: %d calls, final %+v", c.after, len(times), r)
		}
		gap := times[1].Sub(times[0])
		mu.Unlock()
		if gap < c.min || gap > c.lim {
			t.Errorf("Retry-After %s, MaxBackoff %s: retried after %s", c.after, c.max, gap)
		}
	}
}

func TestRetryAfterParse(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"": 0, "5": 5 * time.Second, " 2 ": 2 * time.Second, "0": 0, "-3": 0, "soon": 0,
		"99999999999":                   24 * time.Hour,
		"Wed, 01 Jan 2025 00:00:30 GMT": 30 * time.Second,
		"Tue, 31 Dec 2024 00:00:00 GMT": 0,
	} {
		if got := retryAfter(in, now); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}

func TestClientErrorIsFinal(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, "invalid_payload")
		w.Write(make([]byte, 1<<20)) // not read past a few KiB
	}))
	defer srv.Close()
	rec := newRecorder()
	n := New([]Target{{URL: srv.URL}}, fast(rec))
	n.Notify(fixture(), "")
	r := rec.final(t, 1)[0]
	closeNow(t, n)
	if calls.Load() != 1 || r.Attempt != 1 || r.Status != 400 || r.Err == nil || len(rec.results()) != 1 {
		t.Fatalf("calls %d, results %+v", calls.Load(), rec.results())
	}
	if msg := r.Err.Error(); !strings.Contains(msg, "HTTP 400: invalid_payload") || len(msg) > 400 {
		t.Errorf("err %q", msg)
	}
}

// hanging is a server whose handler waits until released (or the client
// goes away); started counts requests that arrived.
func hanging(t *testing.T) (srv *httptest.Server, started chan struct{}, release func()) {
	started = make(chan struct{}, 100)
	stop := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(stop) }) }
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { release(); srv.Close() })
	return srv, started, release
}

func waitN(t *testing.T, ch chan struct{}, n int) {
	t.Helper()
	for range n {
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatal("requests did not arrive")
		}
	}
}

func TestQueueFullDropsWithoutBlocking(t *testing.T) {
	srv, started, release := hanging(t)
	rec := newRecorder()
	o := fast(rec)
	o.Queue = 1
	n := New([]Target{{URL: srv.URL}}, o)
	a := fixture()
	for range workers { // each worker takes one and hangs
		n.Notify(a, "")
		waitN(t, started, 1)
	}
	n.Notify(a, "") // queued
	for range 100 {
		start := time.Now()
		n.Notify(a, "") // dropped
		if d := time.Since(start); d > 20*time.Millisecond {
			t.Fatalf("Notify took %s with a full queue", d)
		}
	}
	drops := rec.final(t, 100)
	for _, r := range drops {
		if !errors.Is(r.Err, ErrQueueFull) || r.Attempt != 0 || r.Status != 0 {
			t.Fatalf("drop %+v", r)
		}
	}
	release()
	rec.final(t, 3)
	closeNow(t, n)
}

func TestTimeoutCutsHangingServer(t *testing.T) {
	srv, _, _ := hanging(t)
	rec := newRecorder()
	o := fast(rec)
	o.Timeout, o.Attempts = 50*time.Millisecond, 1
	n := New([]Target{{URL: srv.URL}}, o)
	start := time.Now()
	n.Notify(fixture(), "")
	r := rec.final(t, 1)[0]
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %s", d)
	}
	closeNow(t, n)
	if !errors.Is(r.Err, context.DeadlineExceeded) || r.Status != 0 || !strings.Contains(r.Err.Error(), "no answer within 50ms") {
		t.Fatalf("result %+v", r)
	}
}

func TestCloseDrains(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(10 * time.Millisecond)
		if calls.Add(1)%3 == 0 {
			w.WriteHeader(http.StatusBadGateway) // retried
		}
	}))
	defer srv.Close()
	rec := newRecorder()
	n := New([]Target{{URL: srv.URL}}, fast(rec))
	for range 10 {
		n.Notify(fixture(), "")
	}
	closeNow(t, n) // waits for all ten
	var ok int
	for _, r := range rec.results() {
		if r.Final && r.Err == nil {
			ok++
		}
	}
	if ok != 10 {
		t.Fatalf("%d delivered before Close returned: %+v", ok, rec.results())
	}
	n.Notify(fixture(), "") // reported before Notify returns
	if all := rec.results(); len(all) == 0 || !errors.Is(all[len(all)-1].Err, ErrClosed) || !all[len(all)-1].Final {
		t.Fatalf("after Close: %+v", all[len(all)-1])
	}
	if err := n.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestCloseGivesUpAtDeadline(t *testing.T) {
	srv, started, _ := hanging(t)
	rec := newRecorder()
	o := fast(rec)
	o.Timeout = time.Minute
	n := New([]Target{{URL: srv.URL}}, o)
	for range 5 {
		n.Notify(fixture(), "")
	}
	waitN(t, started, workers)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := n.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Close took %s", d)
	}
	all := rec.results() // every delivery has its final result by now
	var cut, dropped int
	for _, r := range all {
		switch {
		case !r.Final:
			t.Errorf("non-final %+v", r)
		case errors.Is(r.Err, ErrClosed) && r.Attempt == 0:
			dropped++
		case r.Attempt == 1 && errors.Is(r.Err, context.Canceled):
			cut++
		}
	}
	if cut != 2 || dropped != 3 {
		t.Fatalf("cut %d, dropped %d: %+v", cut, dropped, all)
	}
}

func TestInvalidTargetFailsFinally(t *testing.T) {
	rec := newRecorder()
	n := New([]Target{{URL: "ftp://h/x?k=secret"}, {URL: "http://h", Format: "xml"}}, fast(rec))
	n.Notify(fixture(), "")
	res := rec.final(t, 2)
	closeNow(t, n)
	for _, r := range res {
		if r.Err == nil || r.Attempt != 0 || strings.Contains(r.Err.Error()+r.Target, "secret") {
			t.Errorf("%+v", r)
		}
	}
}

func TestTargetValidate(t *testing.T) {
	for _, c := range []struct {
		t    Target
		want string
	}{
		{Target{URL: "https://hooks.example.com/x", Format: "slack", Headers: map[string]string{"X-Token": "a"}}, ""},
		{Target{URL: "http://127.0.0.1:9/"}, ""},
		{Target{URL: "ftp://h"}, `scheme "ftp" not supported`},
		{Target{URL: "https:///path"}, "has no host"},
		{Target{URL: "http://h", Format: "xml"}, `format "xml" not supported (want json or slack)`},
		{Target{URL: "http://h", Headers: map[string]string{"Bad Name": "x"}}, "not a valid HTTP token"},
		{Target{URL: "http://h", Headers: map[string]string{"X-T": "a\nb"}}, "control characters"},
	} {
		err := c.t.Validate()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%v: %v, want %q", c.t, err, c.want)
		}
	}
	s := Target{URL: "https://u:p@h/x?k=1", Headers: map[string]string{"X-Token": "tok"}}.String()
	if strings.Contains(s, "tok") || strings.Contains(s, "u:p") || strings.Contains(s, "k=1") {
		t.Errorf("String leaks: %s", s)
	}
}

func TestNilAndEmpty(t *testing.T) {
	var n *Notifier
	n.Notify(fixture(), "")
	if err := n.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	e := New(nil, Options{})
	e.Notify(fixture(), "")
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestBackoff(t *testing.T) {
	n := &Notifier{o: Options{Backoff: time.Second, MaxBackoff: time.Minute}}
	for attempt, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 7: time.Minute, 100: time.Minute} {
		for range 20 {
			if d := n.backoff(attempt); d < want/2 || d > want {
				t.Fatalf("attempt %d: %s, want in [%s, %s]", attempt, d, want/2, want)
			}
		}
	}
}

func TestNoGoroutineLeak(t *testing.T) {
	srv, started, release := hanging(t)
	ok := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer ok.Close()
	client := &http.Client{Transport: &http.Transport{}}
	before := runtime.NumGoroutine()
	rec := newRecorder()
	o := fast(rec)
	o.Client = client
	n := New([]Target{{URL: ok.URL}, {URL: srv.URL}}, o)
	for range 5 {
		n.Notify(fixture(), "")
	}
	waitN(t, started, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	n.Close(ctx)
	release()
	client.CloseIdleConnections()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines after Close, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
		client.CloseIdleConnections()
	}
}
