// Command loadgen is a closed-loop HTTP load generator for AOS and ACS JSON-RPC
// endpoints.
//
// Each of -c workers sends the -body request, waits for the answer, and sends the next
// one at once, over a keep-alive connection pool, for -warmup then -d. Every request
// carries a unique JSON-RPC id (the template's id is rewritten by splicing bytes). An
// answer counts as a decision when it is HTTP 200, echoes the id and holds "decision";
// anything else is an error. Latencies of decisions completed in the measured window go
// into a log-linear histogram (bounded memory, < 0.4% relative error), from which the
// percentiles are read.
//
// In ACS mode (-acs, or -acs-key-id with -acs-key-file) the body is an ACS request:
// each worker is one ACS session that first sends handshake/hello (not measured), then
// builds every request afresh from the template (a new request_id and timestamp, its
// session's session_id) and signs it with HMAC-SHA256 over its JCS form; an answer
// counts only when it is a JSON-RPC result holding result.decision (see acs.go).
//
// loadgen only targets loopback addresses and always stops by itself.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/bits"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type config struct {
	url     string
	body    string
	conns   int
	dur     time.Duration
	warmup  time.Duration
	timeout time.Duration
	max     int64
	json    bool
	label   string
	auth    string // the Authorization header's value ("" for none)
	idIn    string // -id-in: the top-level member (an object) whose "id" is rewritten

	acs        bool   // -acs: the body is an ACS request (unsigned unless a key is given)
	acsKeyFile string // -acs-key-file: the key material, hex
	acsKeyID   string // -acs-key-id: the key_id to sign with (ACS mode, signed)

	serverPID int // -server-pid: the process whose CPU time to account for (0: none)
}

func main() {
	var cfg config
	flag.StringVar(&cfg.url, "url", "", "target URL, e.g. http://127.0.0.1:8787/aos (loopback only)")
	flag.StringVar(&cfg.body, "body", "", "file holding the JSON-RPC request template (must be a JSON object)")
	flag.IntVar(&cfg.conns, "c", 32, "concurrent connections (closed-loop workers)")
	flag.DurationVar(&cfg.dur, "d", 10*time.Second, "measured duration")
	flag.DurationVar(&cfg.warmup, "warmup", 2*time.Second, "warm-up duration before measuring (not recorded)")
	flag.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "per-request timeout")
	flag.Int64Var(&cfg.max, "n", 0, "stop after this many measured decisions (0: only -d bounds the run)")
	flag.BoolVar(&cfg.json, "json", false, "print one JSON object instead of text")
	flag.StringVar(&cfg.label, "label", "", "name printed with the results")
	flag.StringVar(&cfg.auth, "token-file", "", "file holding a bearer token to send (Authorization: Bearer ...)")
	flag.StringVar(&cfg.idIn, "id-in", "", "rewrite the \"id\" of this top-level member (an object), not the top-level \"id\": -id-in input for OPA's data API ({\"input\": <request>}, answered by a policy that echoes input.id)")
	flag.BoolVar(&cfg.acs, "acs", false, "the body is an ACS request: one session per connection, a handshake first, a fresh request_id and timestamp per request (unsigned without -acs-key-id)")
	flag.StringVar(&cfg.acsKeyFile, "acs-key-file", "", "file holding the ACS key material as hex (\"hex:\" prefix allowed), with -acs-key-id")
	flag.StringVar(&cfg.acsKeyID, "acs-key-id", "", "sign every ACS request with HMAC-SHA256 under this key_id (implies -acs; needs -acs-key-file)")
	flag.IntVar(&cfg.serverPID, "server-pid", 0, "also report this process's CPU time per decision over the measured window (Linux: /proc/PID/stat), beside loadgen's own and the machine's idle share")
	flag.Parse()

	if err := run(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func run(cfg config, out io.Writer) error {
	if cfg.url == "" || cfg.body == "" {
		return errors.New("-url and -body are required")
	}
	if cfg.conns < 1 || cfg.conns > 4096 {
		return fmt.Errorf("-c %d: want 1..4096", cfg.conns)
	}
	if cfg.dur <= 0 || cfg.dur > time.Hour || cfg.warmup < 0 || cfg.warmup > time.Hour {
		return errors.New("-d must be in (0, 1h] and -warmup in [0, 1h]")
	}
	if err := checkLoopback(cfg.url); err != nil {
		return err
	}
	raw, err := os.ReadFile(cfg.body)
	if err != nil {
		return err
	}
	var tpl *template
	var acs *acsTemplate
	if cfg.acs || cfg.acsKeyID != "" || cfg.acsKeyFile != "" {
		if cfg.idIn != "" {
			return errors.New("-id-in does not go with ACS mode")
		}
		if acs, err = newACSTemplate(raw, cfg.acsKeyID, cfg.acsKeyFile); err != nil {
			return fmt.Errorf("%s: %w", cfg.body, err)
		}
	} else if tpl, err = newTemplateIn(raw, cfg.idIn); err != nil {
		return fmt.Errorf("%s: %w", cfg.body, err)
	}

	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        cfg.conns,
		MaxIdleConnsPerHost: cfg.conns,
		MaxConnsPerHost:     cfg.conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: cfg.timeout}

	// Fail fast, with the server's answer, if the target does not speak AOS at all.
	auth := ""
	if cfg.auth != "" {
		tok, err := os.ReadFile(cfg.auth)
		if err != nil {
			return fmt.Errorf("token file: %w", err)
		}
		auth = "Bearer " + strings.TrimSpace(string(tok))
	}
	probe := &worker{client: client, url: cfg.url, tpl: tpl, prefix: "probe-", auth: auth}
	if acs != nil {
		probe.acs = acs.session()
		if err := probe.handshake(context.Background()); err != nil {
			return fmt.Errorf("probe handshake: %w", err)
		}
	}
	if err := probe.do(context.Background()); err != nil {
		return fmt.Errorf("probe request: %w", err)
	}

	runID := strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	workers := make([]*worker, cfg.conns)
	for i := range workers {
		workers[i] = &worker{client: client, url: cfg.url, tpl: tpl, auth: auth,
			prefix: "lg-" + runID + "-" + strconv.Itoa(i) + "-"}
	}
	if acs != nil {
		// Every worker is its own ACS session: negotiate them all before the clock
		// starts, so that no handshake is in the warm-up or the measured window.
		if err := handshakeAll(workers, acs, cfg.timeout); err != nil {
			return err
		}
	}
	start := time.Now()
	measureFrom := start.Add(cfg.warmup)
	measureTo := measureFrom.Add(cfg.dur)
	// Hard stop: no request may outlive the run by more than its timeout.
	ctx, cancel := context.WithDeadline(context.Background(), measureTo.Add(cfg.timeout))
	defer cancel()

	// The CPU accounting samples at the window's edges.
	var cpuA, cpuB cpuSample
	var cpuErr error
	cpuDone := make(chan struct{})
	go func() {
		defer close(cpuDone)
		time.Sleep(time.Until(measureFrom))
		if cpuA, cpuErr = sampleCPU(cfg.serverPID); cpuErr != nil {
			return
		}
		time.Sleep(time.Until(measureTo))
		cpuB, cpuErr = sampleCPU(cfg.serverPID)
	}()

	var measured atomic.Int64
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				t0 := time.Now()
				if !t0.Before(measureTo) || ctx.Err() != nil {
					return
				}
				if cfg.max > 0 && measured.Load() >= cfg.max {
					return
				}
				err := w.do(ctx)
				t1 := time.Now()
				if t1.Before(measureFrom) || t1.After(measureTo) {
					continue // warm-up, or finished after the window closed
				}
				if err != nil {
					w.errs.count(err)
					continue
				}
				measured.Add(1)
				w.hist.record(t1.Sub(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := cfg.dur
	stoppedEarly := false
	if now := time.Now(); now.Before(measureTo) { // stopped early by -n
		elapsed = now.Sub(measureFrom)
		stoppedEarly = true
	}
	if !stoppedEarly {
		<-cpuDone // the window is closed: the second sample is taken
	}

	var total histogram
	var errs errCounts
	var prep time.Duration
	var prepN int64
	for _, w := range workers {
		total.merge(&w.hist)
		errs.add(&w.errs)
		if w.acs != nil {
			prep += w.acs.prep
			prepN += w.acs.prepN
		}
	}
	rep := report{
		Label:     cfg.label,
		URL:       cfg.url,
		Conns:     cfg.conns,
		DurationS: elapsed.Seconds(),
		Decisions: total.n,
		Errors:    errs.total(),
		ErrTrans:  errs.transport,
		ErrStatus: errs.status,
		ErrBody:   errs.body,
		RPS:       float64(total.n) / elapsed.Seconds(),
		MeanUS:    us(total.mean()),
		P50US:     us(total.quantile(0.50)),
		P90US:     us(total.quantile(0.90)),
		P99US:     us(total.quantile(0.99)),
		P999US:    us(total.quantile(0.999)),
		MaxUS:     us(total.max),
		FirstErr:  errs.first,
	}
	if !stoppedEarly { // (cpuDone was received: the samples are read)
		if cpuErr != nil && cfg.serverPID > 0 {
			return fmt.Errorf("-server-pid %d: %w", cfg.serverPID, cpuErr)
		}
		if cpuErr == nil {
			cpuReport(&rep, cpuA, cpuB, total.n, cfg.serverPID > 0)
		}
	}
	if acs != nil {
		rep.ACS, rep.Signed = true, acs.key != nil
		if prepN > 0 {
			rep.PrepUS = us(prep / time.Duration(prepN))
		}
	}
	if cfg.json {
		enc := json.NewEncoder(out)
		return enc.Encode(rep)
	}
	rep.print(out)
	return nil
}

// checkLoopback refuses any target that is not a loopback address.
func checkLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if u.Scheme != "http" {
		return fmt.Errorf("%s: only http:// targets", raw)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s: loadgen only targets loopback addresses (127.0.0.1, ::1, localhost)", raw)
	}
	return nil
}

// template is the request body split around its top-level "id" value.
type template struct {
	head, tail []byte
}

// newTemplate compacts the JSON object in raw and finds its top-level "id" member (or
// adds one) so that each request can splice a fresh id between head and tail.
func newTemplate(raw []byte) (*template, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, fmt.Errorf("body is not valid JSON: %w", err)
	}
	raw = compact.Bytes()
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("body must be a JSON object (a single JSON-RPC request)")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		if tok == "id" {
			end := int(dec.InputOffset())
			start := end - len(val)
			return &template{head: raw[:start:start], tail: raw[end:]}, nil
		}
	}
	// No id: add one as the first member.
	rest := raw[1:]
	head := []byte(`{"id":`)
	tail := []byte{}
	if len(rest) > 0 && rest[0] != '}' {
		tail = append(tail, ',')
	}
	tail = append(tail, rest...)
	return &template{head: head, tail: tail}, nil
}

// newTemplateIn is newTemplate with the id inside the top-level member named in (an
// object), e.g. "input" for OPA's {"input": <request>}; in "" is newTemplate.
func newTemplateIn(raw []byte, in string) (*template, error) {
	if in == "" {
		return newTemplate(raw)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, fmt.Errorf("body is not valid JSON: %w", err)
	}
	raw = compact.Bytes()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("body must be a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		if tok != in {
			continue
		}
		if len(val) == 0 || val[0] != '{' {
			return nil, fmt.Errorf("-id-in %s: the body's %q member is not an object", in, in)
		}
		end := int(dec.InputOffset())
		start := end - len(val)
		inner, err := newTemplate(val)
		if err != nil {
			return nil, err
		}
		head := append(raw[:start:start], inner.head...)
		tail := append(inner.tail[:len(inner.tail):len(inner.tail)], raw[end:]...)
		return &template{head: head, tail: tail}, nil
	}
	return nil, fmt.Errorf("-id-in %s: the body has no top-level %q member", in, in)
}

// worker is one closed-loop client; it owns its buffers, histogram and error counts.
type worker struct {
	client *http.Client
	url    string
	tpl    *template   // AOS mode
	acs    *acsSession // ACS mode (tpl is nil)
	prefix string
	seq    uint64
	body   []byte
	idq    []byte // the quoted id of the current request
	resp   bytes.Buffer
	auth   string // Authorization header value, "" for none
	hist   histogram
	errs   errCounts
}

type statusError struct {
	code int
	body string
}

func (e *statusError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.code, e.body) }

type bodyError struct {
	body string
	why  string // "" for the AOS check's message
}

func (e *bodyError) Error() string {
	if e.why != "" {
		return e.why + ": " + e.body
	}
	return "answer without a decision for our id: " + e.body
}

func (w *worker) do(ctx context.Context) error {
	w.seq++
	w.idq = append(w.idq[:0], '"')
	w.idq = append(w.idq, w.prefix...)
	w.idq = strconv.AppendUint(w.idq, w.seq, 10)
	w.idq = append(w.idq, '"')
	if w.acs != nil {
		return w.doACS(ctx, false)
	}
	w.body = append(w.body[:0], w.tpl.head...)
	w.body = append(w.body, w.idq...)
	w.body = append(w.body, w.tpl.tail...)

	b, err := w.post(ctx)
	if err != nil {
		return err
	}
	if !bytes.Contains(b, []byte(`"decision"`)) || !bytes.Contains(b, w.idq) {
		return &bodyError{body: snippet(b)}
	}
	return nil
}

// post sends w.body and returns the answer's bytes (valid until the next post); an
// answer that is not HTTP 200 is a *statusError.
func (w *worker) post(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(w.body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if w.auth != "" {
		req.Header.Set("Authorization", w.auth)
	}
	res, err := w.client.Do(req)
	if err != nil {
		return nil, err
	}
	w.resp.Reset()
	_, err = w.resp.ReadFrom(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	b := w.resp.Bytes()
	if res.StatusCode != http.StatusOK {
		return nil, &statusError{code: res.StatusCode, body: snippet(b)}
	}
	return b, nil
}

func snippet(b []byte) string {
	if len(b) > 200 {
		b = b[:200]
	}
	return string(bytes.TrimSpace(b))
}

type errCounts struct {
	transport, status, body int64
	first                   string
}

func (e *errCounts) count(err error) {
	var se *statusError
	var be *bodyError
	switch {
	case errors.As(err, &se):
		e.status++
	case errors.As(err, &be):
		e.body++
	default:
		e.transport++
	}
	if e.first == "" {
		e.first = err.Error()
	}
}

func (e *errCounts) add(o *errCounts) {
	e.transport += o.transport
	e.status += o.status
	e.body += o.body
	if e.first == "" {
		e.first = o.first
	}
}

func (e *errCounts) total() int64 { return e.transport + e.status + e.body }

// histogram is log-linear over nanoseconds: values below 256 ns are exact, above that
// each power of two is split into 128 buckets (relative error < 1/256 at the midpoint).
type histogram struct {
	buckets [64 * 128]uint64
	n       int64
	sum     time.Duration
	max     time.Duration
}

const subBits = 7 // 128 sub-buckets per octave

func bucketOf(v uint64) int {
	l := bits.Len64(v)
	if l <= subBits+1 {
		return int(v)
	}
	shift := l - (subBits + 1)
	return shift<<subBits + int(v>>shift)
}

// bucketMid is the midpoint of bucket i, the value reported for samples in it.
func bucketMid(i int) uint64 {
	if i < 2<<subBits {
		return uint64(i)
	}
	shift := i>>subBits - 1
	m := uint64(i - shift<<subBits)
	return m<<shift + (uint64(1)<<shift)/2
}

func (h *histogram) record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.buckets[bucketOf(uint64(d))]++
	h.n++
	h.sum += d
	if d > h.max {
		h.max = d
	}
}

func (h *histogram) merge(o *histogram) {
	for i, c := range o.buckets {
		h.buckets[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	h.max = max(h.max, o.max)
}

func (h *histogram) mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return h.sum / time.Duration(h.n)
}

// quantile returns the value at quantile q (0..1), never more than the maximum seen.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.5)
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, c := range h.buckets {
		seen += c
		if seen >= rank {
			return min(time.Duration(bucketMid(i)), h.max)
		}
	}
	return h.max
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

type report struct {
	Label     string  `json:"label,omitempty"`
	URL       string  `json:"url"`
	Conns     int     `json:"conns"`
	DurationS float64 `json:"duration_s"`
	Decisions int64   `json:"decisions"`
	Errors    int64   `json:"errors"`
	ErrTrans  int64   `json:"errors_transport"`
	ErrStatus int64   `json:"errors_status"`
	ErrBody   int64   `json:"errors_body"`
	RPS       float64 `json:"rps"`
	MeanUS    float64 `json:"mean_us"`
	P50US     float64 `json:"p50_us"`
	P90US     float64 `json:"p90_us"`
	P99US     float64 `json:"p99_us"`
	P999US    float64 `json:"p999_us"`
	MaxUS     float64 `json:"max_us"`
	FirstErr  string  `json:"first_error,omitempty"`
	// CPU time per decision over the measured window: the server's
	// (-server-pid) and loadgen's own, and the machine's idle share
	// (idle + I/O wait of all CPUs), in percent. Absent when the run
	// stopped early (-n).
	ServerCPUUS float64 `json:"server_cpu_us,omitempty"`
	ClientCPUUS float64 `json:"client_cpu_us,omitempty"`
	IdlePct     float64 `json:"idle_pct,omitempty"`
	// ACS mode: whether requests were signed, and the client's mean time to build
	// (and sign) one request, measured around that work alone.
	ACS    bool    `json:"acs,omitempty"`
	Signed bool    `json:"signed,omitempty"`
	PrepUS float64 `json:"client_prep_us,omitempty"`
}

func (r *report) print(out io.Writer) {
	if r.Label != "" {
		fmt.Fprintf(out, "%s\n", r.Label)
	}
	fmt.Fprintf(out, "target       %s\n", r.URL)
	fmt.Fprintf(out, "connections  %d, measured %.2fs\n", r.Conns, r.DurationS)
	fmt.Fprintf(out, "decisions    %d (%.1f/s)\n", r.Decisions, r.RPS)
	fmt.Fprintf(out, "errors       %d (transport %d, status %d, body %d)\n", r.Errors, r.ErrTrans, r.ErrStatus, r.ErrBody)
	if r.FirstErr != "" {
		fmt.Fprintf(out, "first error  %s\n", r.FirstErr)
	}
	fmt.Fprintf(out, "latency      mean %s  p50 %s  p90 %s  p99 %s  p99.9 %s  max %s\n",
		fmtUS(r.MeanUS), fmtUS(r.P50US), fmtUS(r.P90US), fmtUS(r.P99US), fmtUS(r.P999US), fmtUS(r.MaxUS))
	if r.ClientCPUUS > 0 {
		fmt.Fprintf(out, "cpu          per decision: server %s, loadgen %s; machine idle %.1f%%\n",
			fmtUS(r.ServerCPUUS), fmtUS(r.ClientCPUUS), r.IdlePct)
	}
	if r.ACS {
		what := "unsigned"
		if r.Signed {
			what = "signed (HMAC-SHA256 over JCS)"
		}
		fmt.Fprintf(out, "acs          %s, client build per request %s\n", what, fmtUS(r.PrepUS))
	}
}

func fmtUS(v float64) string {
	if v >= 1000 {
		return strconv.FormatFloat(v/1000, 'f', 2, 64) + "ms"
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + "µs"
}
