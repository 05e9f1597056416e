// Package notify tells people about new approvals (docs/approvals.md): it POSTs
// a notification for each approval to the configured webhooks, as warden's
// own JSON or as a Slack incoming-webhook message, without ever blocking the
// caller.
//
// Notify only enqueues; a small fixed pool of workers delivers. A full queue
// drops the delivery (and says so through Options.OnResult). A delivery is
// retried with exponential backoff and jitter on network errors, timeouts,
// HTTP 429 and 5xx (a Retry-After is honoured, capped by MaxBackoff); any
// other non-2xx answer is final. Every attempt is bounded by
// Options.Timeout, and at most a few KiB of an answer are read.
//
// Header values (tokens) never appear in a Result or an error; URLs appear
// without userinfo and query.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wardenhq/warden/approval"

	"github.com/wardenhq/warden/internal/traceparent"
	"github.com/wardenhq/warden/webhook"
)

// The formats of a Target.
const (
	// FormatJSON posts {"type":"approval.created","approval":{...},"link":"..."}.
	FormatJSON = "json"
	// FormatSlack posts a Slack incoming-webhook message: {"text": "..."}.
	FormatSlack = "slack"
)

// Defaults for the zero values of Options.
const (
	DefaultQueue      = 1024
	DefaultAttempts   = 5
	DefaultBackoff    = time.Second
	DefaultMaxBackoff = time.Minute
	DefaultTimeout    = 10 * time.Second
)

// workers is how many deliveries run at once.
const workers = 2

// maxAnswer is how much of an answer's body is read (and quoted, shortened,
// in errors); the rest is discarded unread.
const maxAnswer = 4 << 10

// Errors reported through Options.OnResult for deliveries never attempted.
var (
	// ErrQueueFull: the queue held Options.Queue deliveries already, so
	// this one was dropped.
	ErrQueueFull = errors.New("notify: queue full, notification dropped")
	// ErrClosed: the notifier was closed (or its Close gave up) before
	// the delivery could be attempted.
	ErrClosed = errors.New("notify: notifier closed, notification dropped")
)

// Target is one webhook to notify.
type Target struct {
	// URL is the http(s) URL to POST to.
	URL string
	// Format is FormatJSON ("" means json) or FormatSlack.
	Format string
	// Headers are sent with every request (already ${VAR}-expanded); they
	// often hold tokens and are never printed. Content-Type is always
	// application/json; a Host header sets the request's host.
	Headers map[string]string
}

// Validate reports whether t can be delivered to: an absolute http(s) URL
// with a host, a known format, and header names and values HTTP allows.
// Its errors name the URL without userinfo or query and no header value.
func (t Target) Validate() error {
	switch t.Format {
	case "", FormatJSON, FormatSlack:
	default:
		return fmt.Errorf("notify: format %q not supported (want json or slack)", t.Format)
	}
	// The webhook hook kind checks URLs and headers the same way.
	_, err := webhook.New(webhook.Config{URL: t.URL, Headers: t.Headers}, http.DefaultClient)
	return err
}

// String describes t without header values, query or userinfo, for logs.
func (t Target) String() string {
	f := t.Format
	if f == "" {
		f = FormatJSON
	}
	return "notify{url=" + safeURL(t.URL) + " format=" + f + "}"
}

// GoString masks t for %#v as String does for %v.
func (t Target) GoString() string { return t.String() }

// Options tune a Notifier. Zero values mean the defaults.
type Options struct {
	// Queue bounds the deliveries waiting for a worker (default 1024);
	// past it Notify drops deliveries.
	Queue int
	// Attempts bounds the tries of one delivery (default 5).
	Attempts int
	// Backoff is the wait before the first retry, doubled for each
	// further one (with jitter) up to MaxBackoff (defaults 1s and 1m).
	Backoff, MaxBackoff time.Duration
	// Timeout bounds one attempt: connecting, sending and reading the
	// answer (default 10s).
	Timeout time.Duration
	// Client sends the requests; nil means webhook.SharedClient (pooled,
	// redirects not followed).
	Client *http.Client
	// OnResult, if set, is called after each attempt and for each dropped
	// delivery, from the workers or from Notify: it may be called
	// concurrently and should return quickly.
	OnResult func(Result)
}

// Result is the outcome of one attempt to deliver one notification, or of
// a delivery dropped before any attempt (Attempt 0).
type Result struct {
	// Target is the target's URL without userinfo and query; never its
	// headers.
	Target string
	// ApprovalID is the approval notified about.
	ApprovalID string
	// Attempt counts the tries of this delivery from 1. A delivery
	// dropped (ErrQueueFull, ErrClosed) reports the tries made before,
	// usually 0.
	Attempt int
	// Status is the HTTP status answered; 0 when there was no answer.
	Status int
	// Err is nil when the target accepted the notification (2xx).
	Err error
	// Final is true when no more attempts follow: delivered, a final
	// refusal, attempts used up, or dropped.
	Final bool
}

// Notifier delivers approval notifications in the background. It is safe
// for concurrent use. A nil *Notifier, or one without targets, does
// nothing.
type Notifier struct {
	targets []target
	o       Options
	queue   chan job

	mu     sync.RWMutex // guards closed against sends on queue
	closed bool
	once   sync.Once

	// ctx ends when Close gives up: attempts in flight are cancelled and
	// waits for a retry end.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// target is a Target prepared for requests.
type target struct {
	url     string
	safe    string
	format  string
	host    string
	headers http.Header
	err     error // from Validate: every delivery fails with it
}

// job is one delivery.
type job struct {
	t    *target
	id   string
	body []byte
	// trace is the asking decision's traceparent and tracestate (otel:),
	// nil without one.
	trace http.Header
}

// New returns a notifier for targets and starts its workers (none without
// targets). A target that does not Validate is kept: each delivery to it
// fails at once, finally, with the reason. Call Close to stop it.
func New(targets []Target, o Options) *Notifier {
	if o.Queue <= 0 {
		o.Queue = DefaultQueue
	}
	if o.Attempts <= 0 {
		o.Attempts = DefaultAttempts
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.MaxBackoff < o.Backoff {
		o.MaxBackoff = o.Backoff
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Client == nil {
		o.Client = webhook.SharedClient()
	}
	n := &Notifier{o: o, queue: make(chan job, o.Queue)}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	for _, t := range targets {
		p := target{url: t.URL, safe: safeURL(t.URL), format: t.Format, headers: http.Header{}, err: t.Validate()}
		if p.format == "" {
			p.format = FormatJSON
		}
		for k, v := range t.Headers {
			if http.CanonicalHeaderKey(k) == "Host" {
				p.host = v
				continue
			}
			p.headers.Set(k, v)
		}
		p.headers.Set("Content-Type", "application/json")
		n.targets = append(n.targets, p)
	}
	if len(n.targets) > 0 {
		n.wg.Add(workers)
		for range workers {
			go n.work()
		}
	}
	return n
}

// Notify enqueues one delivery of a (linking to link, which may be "") per
// target and returns at once. A delivery that finds the queue full, or the
// notifier closed, is dropped and reported through OnResult.
func (n *Notifier) Notify(a approval.Approval, link string) {
	n.NotifyContext(context.Background(), a, link)
}

// NotifyContext is Notify for the decision whose context is ctx: its trace
// context, when it has one (otel:), is sent with each delivery as W3C
// traceparent and tracestate.
func (n *Notifier) NotifyContext(ctx context.Context, a approval.Approval, link string) {
	if n == nil || len(n.targets) == 0 {
		return
	}
	var tr http.Header
	if ctx != nil {
		h := http.Header{}
		traceparent.Inject(ctx, h)
		if len(h) > 0 {
			tr = h
		}
	}
	bodies := map[string][]byte{}
	var dropped []Result
	n.mu.RLock()
	for i := range n.targets {
		t := &n.targets[i]
		b, ok := bodies[t.format]
		if !ok {
			b = Body(t.format, a, link)
			bodies[t.format] = b
		}
		if n.closed {
			dropped = append(dropped, Result{Target: t.safe, ApprovalID: a.ID, Err: ErrClosed, Final: true})
			continue
		}
		select {
		case n.queue <- job{t: t, id: a.ID, body: b, trace: tr}:
		default:
			dropped = append(dropped, Result{Target: t.safe, ApprovalID: a.ID, Err: ErrQueueFull, Final: true})
		}
	}
	n.mu.RUnlock()
	for _, r := range dropped {
		n.report(r)
	}
}

// Close stops accepting notifications and lets the queued and retrying
// deliveries go on until they are done or ctx is; then it cancels what is
// left (reported with ErrClosed or the cancelled attempt's error) and
// returns once the workers have stopped. It returns ctx's error when
// deliveries were cut short, else nil. Close may be called more than once.
func (n *Notifier) Close(ctx context.Context) error {
	if n == nil {
		return nil
	}
	n.once.Do(func() {
		n.mu.Lock()
		n.closed = true
		close(n.queue)
		n.mu.Unlock()
	})
	done := make(chan struct{})
	go func() { n.wg.Wait(); close(done) }()
	select {
	case <-done:
		n.cancel()
		return nil
	case <-ctx.Done():
		select {
		case <-done: // finished as ctx ended: nothing was cut short
			n.cancel()
			return nil
		default:
		}
		n.cancel()
		<-done
		return ctx.Err()
	}
}

func (n *Notifier) report(r Result) {
	if n.o.OnResult != nil {
		n.o.OnResult(r)
	}
}

func (n *Notifier) work() {
	defer n.wg.Done()
	for j := range n.queue {
		n.deliver(j)
	}
}

// deliver tries j until it is delivered, refused for good, out of
// attempts, or the notifier gives up.
func (n *Notifier) deliver(j job) {
	r := Result{Target: j.t.safe, ApprovalID: j.id}
	if j.t.err != nil {
		r.Err, r.Final = j.t.err, true
		n.report(r)
		return
	}
	for attempt := 1; ; attempt++ {
		if n.ctx.Err() != nil {
			r.Attempt, r.Status, r.Err, r.Final = attempt-1, 0, ErrClosed, true
			n.report(r)
			return
		}
		status, wait, retry, err := n.post(j)
		if n.ctx.Err() != nil {
			retry = false // Close gave up: this was the last try
		}
		r.Attempt, r.Status, r.Err = attempt, status, err
		r.Final = !retry || attempt >= n.o.Attempts
		n.report(r)
		if r.Final {
			return
		}
		if wait <= 0 {
			wait = n.backoff(attempt)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-n.ctx.Done():
			t.Stop()
		}
	}
}

// backoff is the wait after the attempt-th failure: Backoff doubled per
// attempt, capped at MaxBackoff, the upper half jittered.
func (n *Notifier) backoff(attempt int) time.Duration {
	d := n.o.Backoff
	for i := 1; i < attempt && d < n.o.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, n.o.MaxBackoff)
	half := d / 2
	return half + rand.N(d-half+1)
}

// post makes one attempt. It returns the status (0 without an answer), a
// wait the server asked for (Retry-After, capped by MaxBackoff), whether
// another attempt may succeed, and the error (nil on 2xx).
func (n *Notifier) post(j job) (status int, wait time.Duration, retry bool, err error) {
	ctx, cancel := context.WithTimeout(n.ctx, n.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.t.url, bytes.NewReader(j.body))
	if err != nil {
		return 0, 0, false, fmt.Errorf("notify %s: %v", j.t.safe, unwrapURL(err))
	}
	req.Header = j.t.headers.Clone()
	if j.t.host != "" {
		req.Host = j.t.host
	}
	for k, v := range j.trace {
		req.Header[k] = v
	}
	resp, err := n.o.Client.Do(req)
	if err != nil {
		return 0, 0, true, n.transportErr(ctx, j, err)
	}
	ans, rerr := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	resp.Body.Close() // the rest, if any, is not read
	status = resp.StatusCode
	if status >= 200 && status <= 299 {
		return status, 0, false, nil
	}
	msg := fmt.Sprintf("notify %s: HTTP %d", j.t.safe, status)
	if e := webhook.Excerpt(ans); e != "" && rerr == nil {
		msg += ": " + e
	}
	retry = status == http.StatusTooManyRequests || status >= 500
	if retry {
		wait = retryAfter(resp.Header.Get("Retry-After"), time.Now())
		wait = min(wait, n.o.MaxBackoff)
	}
	return status, wait, retry, errors.New(msg)
}

// transportErr names a failed exchange without the URL's secrets; a
// timeout wraps context.DeadlineExceeded.
func (n *Notifier) transportErr(ctx context.Context, j job, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		if errors.Is(cerr, context.DeadlineExceeded) {
			return fmt.Errorf("notify %s: no answer within %s: %w", j.t.safe, n.o.Timeout, cerr)
		}
		return fmt.Errorf("notify %s: %w", j.t.safe, cerr)
	}
	return fmt.Errorf("notify %s: %w", j.t.safe, unwrapURL(err))
}

// retryAfter reads a Retry-After header: delay seconds or an HTTP date;
// 0 when absent or not understood.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 {
			return 0
		}
		if s > int64(24*time.Hour/time.Second) {
			s = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// unwrapURL drops a *url.Error's text, which quotes the whole URL.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// safeURL is raw without userinfo, query and fragment (an elided query
// shows as "?…"); "<invalid url>" when it does not parse.
func safeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<invalid url>"
	}
	s := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}).String()
	if u.RawQuery != "" || u.ForceQuery {
		s += "?…"
	}
	return s
}

// Body is the request body a target of format (json, "" or slack) gets
// for approval a with link.
func Body(format string, a approval.Approval, link string) []byte {
	var v any
	if format == FormatSlack {
		v = struct {
			Text string `json:"text"`
		}{SlackText(a, link)}
	} else {
		v = struct {
			Type     string            `json:"type"`
			Approval approval.Approval `json:"approval"`
			Link     string            `json:"link"`
		}{"approval.created", a, link}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Approval holds only strings, bools and times: this cannot
		// happen short of a time outside year 0..9999.
		return []byte(`{"type":"approval.created","error":"approval not encodable"}`)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// SlackText is the one-line message of a Slack notification: what is
// asked, who asked (policy and reason), the tool and event, session,
// agent, expiry and the link, escaped as Slack's mrkdwn requires. Empty
// parts are left out.
func SlackText(a approval.Approval, link string) string {
	var b strings.Builder
	b.WriteString("warden: approval needed")
	if a.Summary != "" {
		b.WriteString(": ")
		b.WriteString(slackEscape(a.Summary))
	}
	var parts []string
	switch {
	case a.PolicyID != "" && a.Reason != "":
		parts = append(parts, "asked by policy "+slackEscape(a.PolicyID)+": "+slackEscape(a.Reason))
	case a.PolicyID != "":
		parts = append(parts, "asked by policy "+slackEscape(a.PolicyID))
	case a.Reason != "":
		parts = append(parts, "reason: "+slackEscape(a.Reason))
	}
	switch {
	case a.Tool != "" && a.Event != "":
		parts = append(parts, "tool "+slackEscape(a.Tool)+" ("+slackEscape(a.Event)+")")
	case a.Tool != "":
		parts = append(parts, "tool "+slackEscape(a.Tool))
	case a.Event != "":
		parts = append(parts, "event "+slackEscape(a.Event))
	}
	add := func(label, v string) {
		if v != "" {
			parts = append(parts, label+" "+slackEscape(v))
		}
	}
	add("session", a.SessionID)
	add("agent", a.AgentID)
	if !a.Expires.IsZero() {
		parts = append(parts, "expires "+a.Expires.UTC().Format(time.RFC3339))
	}
	for _, p := range parts {
		b.WriteString(" · ")
		b.WriteString(p)
	}
	if link != "" {
		b.WriteString(" · <")
		b.WriteString(slackURL(link))
		b.WriteString("|Open in warden>")
	}
	return b.String()
}

// slackEscape escapes &, < and > as Slack requires (so no text can form a
// link or a mention such as <!channel>) and folds line breaks and other
// control characters into spaces, keeping the message on one line.
func slackEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// slackURL makes link safe inside <url|text>: & escaped as Slack asks,
// and the characters that would end the link (<, >, |) or the line
// percent-encoded.
func slackURL(link string) string {
	var b strings.Builder
	for _, r := range link {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<', r == '>', r == '|', r == ' ', r < 0x20, r == 0x7f:
			fmt.Fprintf(&b, "%%%02X", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
