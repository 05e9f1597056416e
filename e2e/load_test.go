package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// toolCall is a steps/toolCallRequest (seed 000) with the id, an input and the
// session id left to fill in.
const toolCall = `{"jsonrpc":"2.0","method":"steps/toolCallRequest","id":%q,"params":{` +
	`"toolCallRequest":{"executionId":"69dbf4c3-be33-4694-a9f0-8d3a824c5d5b",` +
	`"toolId":"c264f381-10cf-4403-bd11-383014c0fcc6","inputs":[` +
	`{"name":"query","value":"team sync about the roadmap"},{"name":"n","value":%d}]},` +
	`"reasoning":"The user asked for the next roadmap sync; search the calendar.",` +
	`"context":{"agent":{"id":"1c88ab7d-395f-449a-af51-6028f9e842ea","name":"Personal assistant",` +
	`"instructions":"You manage my calendar.","version":"9889",` +
	`"provider":{"name":"OpenAI","url":"https://openai.com/"},` +
	`"tools":[{"id":"c264f381-10cf-4403-bd11-383014c0fcc6","name":"search_calendar",` +
	`"type":"function","arguments":[{"name":"query","type":"string","required":true}],"outputs":[]}]},` +
	`"session":{"id":%q},` +
	`"turnId":"69ef57b8-3993-440d-9493-523914f3f149","stepId":"9263448a-186a-4c3b-abcf-443feb44a01e",` +
	`"timestamp":"2025-01-24T15:32:45.123Z"}}}`

// answered maps the JSON-RPC id of every request that got a complete decision to the
// traceId the server reported for it ("" when it reported none).
type answered map[string]string

// sessionID is the session of goroutine g's requests. The trace is read back one
// session at a time because `warden runs` caps --last (at 10,000 with SQLite), and a
// fast machine answers more than that in the load window.
func sessionID(prefix string, g int) string { return fmt.Sprintf("e2e-%s-session-%d", prefix, g) }

// load fires AOS requests from n goroutines until stop is closed.
type load struct {
	stop     chan struct{}
	wg       sync.WaitGroup
	inflight atomic.Int64
	sent     atomic.Int64
	failed   atomic.Int64
	// signalled is set just before the server is signalled; failedBefore counts the
	// failed requests that had been started before that.
	signalled    atomic.Bool
	failedBefore atomic.Int64

	mu       sync.Mutex
	answers  answered
	firstBad string
}

func startLoad(t *testing.T, url string, n int, prefix string) *load {
	t.Helper()
	l := &load{stop: make(chan struct{}), answers: answered{}}
	tr := &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: n, DisableCompression: true}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for g := range n {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				id := fmt.Sprintf("%s-%d-%d", prefix, g, i)
				l.inflight.Add(1)
				l.sent.Add(1)
				before := !l.signalled.Load()
				trace, err := l.call(client, url, id, i, sessionID(prefix, g))
				l.inflight.Add(-1)
				if err != nil {
					l.failed.Add(1)
					if before {
						l.failedBefore.Add(1)
					}
					l.mu.Lock()
					if l.firstBad == "" {
						l.firstBad = err.Error()
					}
					l.mu.Unlock()
					if isDown(err) {
						time.Sleep(5 * time.Millisecond) // server gone: don't spin
					}
					continue
				}
				l.mu.Lock()
				l.answers[id] = trace
				l.mu.Unlock()
			}
		}()
	}
	t.Cleanup(func() { l.halt(); tr.CloseIdleConnections() })
	return l
}

var errNotDecision = fmt.Errorf("answer is not a decision")

func isDown(err error) bool {
	s := err.Error()
	return strings.Contains(s, "connection refused") || strings.Contains(s, "EOF") ||
		strings.Contains(s, "connection reset")
}

func (l *load) call(client *http.Client, url, id string, i int, session string) (string, error) {
	body := fmt.Sprintf(toolCall, id, i, session)
	res, err := client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return "", err
	}
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("HTTP %d: %.200s", res.StatusCode, b)
	}
	var rpc struct {
		ID     string `json:"id"`
		Result struct {
			Decision string `json:"decision"`
			Data     struct {
				TraceID string `json:"traceId"`
			} `json:"data"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &rpc); err != nil || rpc.Result.Decision == "" || rpc.ID != id {
		return "", fmt.Errorf("%w: %.300s", errNotDecision, b)
	}
	return rpc.Result.Data.TraceID, nil
}

// signal marks the moment the server is signalled and returns the number of
// requests in flight.
func (l *load) signal() int64 {
	l.signalled.Store(true)
	return l.inflight.Load()
}

// summary describes the load after halt.
func (l *load) summary() string {
	s := fmt.Sprintf("sent %d requests, answered %d, failed %d (%d of them started before the signal)",
		l.sent.Load(), len(l.answers), l.failed.Load(), l.failedBefore.Load())
	if l.firstBad != "" {
		s += "; first failure: " + l.firstBad
	}
	return s
}

// halt stops the load and waits for every goroutine to finish its request.
func (l *load) halt() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
}

// record is the part of a trace record the tests read.
type record struct {
	ID        string          `json:"id"`
	RequestID json.RawMessage `json:"request_id"`
	Event     string          `json:"event"`
	Decision  string          `json:"decision"`
}

func (r record) requestID() string {
	var s string
	if json.Unmarshal(r.RequestID, &s) == nil {
		return s
	}
	return string(r.RequestID)
}

// readTrace runs `warden runs --data dir -o json` for each session of the load and
// returns all their records.
func readTrace(t *testing.T, bin, dir, prefix string) []record {
	t.Helper()
	var all []record
	for g := range workers {
		all = append(all, readSession(t, bin, dir, sessionID(prefix, g))...)
	}
	return all
}

// traceCap is the most records `warden runs` returns for one query (its --last cap).
const traceCap = 10000

func readSession(t *testing.T, bin, dir, session string) []record {
	t.Helper()
	cmd := exec.Command(bin, "runs", "--data", dir, "--session", session, "--last", strconv.Itoa(traceCap), "-o", "json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("warden runs: %v\nstderr: %s", err, stderr.String())
	}
	var recs []record
	if err := json.Unmarshal(stdout.Bytes(), &recs); err != nil {
		t.Fatalf("warden runs -o json: %v; output starts: %.500s", err, stdout.String())
	}
	if len(recs) >= traceCap {
		t.Fatalf("warden runs --session %s returned %d records, its cap: the listing may be truncated", session, len(recs))
	}
	return recs
}

// checkTrace asserts that every answered request is in the trace, under the record id
// its answer named, and reports how many recorded requests were never answered.
func checkTrace(t *testing.T, recs []record, got answered, prefix string) {
	t.Helper()
	byReq := make(map[string]record, len(recs))
	for _, r := range recs {
		byReq[r.requestID()] = r
	}
	var missing, wrongTrace []string
	for id, trace := range got {
		r, ok := byReq[id]
		switch {
		case !ok:
			missing = append(missing, id)
		case trace != "" && r.ID != trace:
			wrongTrace = append(wrongTrace, fmt.Sprintf("%s: answer traceId %s, record id %s", id, trace, r.ID))
		}
	}
	extra := 0
	for id := range byReq {
		if _, ok := got[id]; !ok && strings.HasPrefix(id, prefix+"-") {
			extra++
		}
	}
	t.Logf("answered %d, trace records %d, answered but missing %d, recorded but unanswered (fine) %d",
		len(got), len(recs), len(missing), extra)
	if len(missing) > 0 {
		t.Errorf("%d answered decisions are not in the trace, e.g. %v", len(missing), first(missing, 5))
	}
	if len(wrongTrace) > 0 {
		t.Errorf("%d records do not carry the traceId their answer named, e.g. %v", len(wrongTrace), first(wrongTrace, 3))
	}
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
