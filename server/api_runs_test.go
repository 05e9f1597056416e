package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/sqlite"
	"github.com/wardenhq/warden/storetest"
)

// apiBase is the time of the newest test record; the others are older.
var apiBase = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// apiRecords are the records of the /api/runs tests, oldest first: r00 …
// r11, one minute apart, differing in every filter.
func apiRecords() []*audit.Record {
	var out []*audit.Record
	for i := range 12 {
		r := &audit.Record{
			ID: fmt.Sprintf("r%02d", i), Time: apiBase.Add(time.Duration(i-11) * time.Minute),
			Event:     []string{"steps/toolCallRequest", "protocols/MCP", "tool.pre_call"}[i%3],
			Surface:   []string{"aos", "mcp", "hooks"}[i%3],
			Decision:  []string{"allow", "allow", "deny", "modify"}[i%4],
			SessionID: []string{"s1", "s2"}[i%2],
			AgentID:   []string{"agent-a", "agent-b", "agent-c"}[(i/2)%3],
			Tool:      []string{"bash", "send_email", ""}[(i/3)%3],
			Tenant:    []string{"", "acme"}[(i/6)%2],
			Reason:    "no policy matched",
			Input:     json.RawMessage(fmt.Sprintf(`{"n":%d,"note":"Quarterly REPORT %d"}`, i, i%5)),
			Results:   []warden.Result{},
		}
		if r.Decision != "allow" {
			r.PolicyID = []string{"p-email", "p-shell"}[i%2]
			r.Reason = "blocked by " + r.PolicyID
		}
		out = append(out, r)
	}
	return out
}

func apiStore(t *testing.T) audit.Store {
	t.Helper()
	st, err := sqlite.Open(t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, r := range apiRecords() {
		if err := st.Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// runsAnswer is /api/runs's answer.
type runsAnswer struct {
	Runs       []audit.Record `json:"runs"`
	NextCursor string         `json:"next_cursor"`
	Partial    bool           `json:"partial"`
	Scanned    int            `json:"scanned"`
}

func (a runsAnswer) ids() []string {
	out := []string{}
	for _, r := range a.Runs {
		out = append(out, r.ID)
	}
	return out
}

// getRuns GETs path from h with tok (none if "") and decodes a 200's body.
func getRuns(t *testing.T, h http.Handler, path, tok string) (int, runsAnswer, string) {
	t.Helper()
	w := do(h, http.MethodGet, path, "", "", tok)
	var a runsAnswer
	if w.Code == 200 {
		if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil {
			t.Fatalf("%s: %v in %s", path, err, w.Body)
		}
		if a.Runs == nil {
			t.Fatalf("%s: no runs array in %s", path, w.Body)
		}
	}
	return w.Code, a, w.Body.String()
}

func ids(s ...string) []string { return s }

func TestAPIRuns(t *testing.T) {
	h := New(Options{Store: apiStore(t)})
	since := url.QueryEscape(apiBase.Add(-3 * time.Minute).Format(time.RFC3339))
	for _, tt := range []struct {
		query string
		want  []string
		next  string
	}{
		{"", ids("r11", "r10", "r09", "r08", "r07", "r06", "r05", "r04", "r03", "r02", "r01", "r00"), ""},
		{"?limit=3", ids("r11", "r10", "r09"), "r09"},
		{"?limit=3&cursor=r09", ids("r08", "r07", "r06"), "r06"},
		{"?limit=3&cursor=r03", ids("r02", "r01", "r00"), ""}, // the last page: no cursor
		{"?limit=12", ids("r11", "r10", "r09", "r08", "r07", "r06", "r05", "r04", "r03", "r02", "r01", "r00"), ""},
		{"?surface=mcp", ids("r10", "r07", "r04", "r01"), ""},
		{"?surface=sdk", ids(), ""},
		{"?event=tool.pre_call", ids("r11", "r08", "r05", "r02"), ""},
		{"?decision=deny", ids("r10", "r06", "r02"), ""},
		{"?decision=deny&limit=2", ids("r10", "r06"), "r06"},
		{"?policy=p-shell", ids("r11", "r07", "r03"), ""},
		{"?tool=send_email", ids("r05", "r04", "r03"), ""},
		{"?tool=nope", ids(), ""},
		{"?session=s2&agent=agent-b", ids("r09", "r03"), ""},
		{"?agent=agent-c", ids("r11", "r10", "r05", "r04"), ""},
		{"?since=" + since, ids("r11", "r10", "r09", "r08"), ""},
		{"?until=" + url.QueryEscape(apiBase.Add(-9*time.Minute).Format(time.RFC3339)), ids("r01", "r00"), ""},
		{"?since=" + since + "&until=" + url.QueryEscape(apiBase.Add(-time.Minute).Format(time.RFC3339Nano)), ids("r09", "r08"), ""},
		{"?q=BLOCKED+BY+p-email", ids("r10", "r06", "r02"), ""}, // reason, any case
		{"?q=report+3", ids("r08", "r03"), ""},                  // input
		{"?q=send_", ids("r05", "r04", "r03"), ""},              // tool
		{"?q=agent-a&decision=allow", ids("r01", "r00"), ""},
		{"?q=nothing+like+it", ids(), ""},
		{"?q=report&limit=2&cursor=r05", ids("r04", "r03"), "r03"},
	} {
		t.Run(tt.query, func(t *testing.T) {
			code, a, body := getRuns(t, h, "/api/runs"+tt.query, "")
			if code != 200 {
				t.Fatalf("status %d: %s", code, body)
			}
			if !slices.Equal(a.ids(), tt.want) || a.NextCursor != tt.next || a.Partial {
				t.Errorf("runs %v next %q partial %v, want %v next %q", a.ids(), a.NextCursor, a.Partial, tt.want, tt.next)
			}
		})
	}
}

func TestAPIRunsBadRequests(t *testing.T) {
	h := New(Options{Store: apiStore(t)})
	for _, tt := range []struct {
		query, param string
	}{
		{"?limit=0", "limit"},
		{"?limit=501", "limit"},
		{"?limit=ten", "limit"},
		{"?surface=web", "surface"},
		{"?decision=block", "decision"},
		{"?since=yesterday", "since"},
		{"?since=-5m", "since"},
		{"?until=2026-11-21", "until"},
		{"?since=1h&until=2h", "since"}, // since after until
		{"?cursor=no-such-record", "cursor"},
		{"?tool=a&tool=b", "tool"},
		{"?sesion=s1", "sesion"},
		{"?last=5", "last"},
		{"?q=a%00b", "q"},
		{"?agent=" + strings.Repeat("x", 1025), "agent"},
		{"?disagree=live", "disagree"},
	} {
		t.Run(tt.query[:min(len(tt.query), 30)], func(t *testing.T) {
			w := do(h, http.MethodGet, "/api/runs"+tt.query, "", "", "")
			var e struct{ Error string }
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || w.Code != 400 {
				t.Fatalf("status %d, body %s (%v), want 400", w.Code, w.Body, err)
			}
			if !strings.HasPrefix(e.Error, tt.param+": ") {
				t.Errorf("error %q does not start with the parameter %q", e.Error, tt.param)
			}
		})
	}
	// The stream takes the filters, not the paging.
	for _, q := range []string{"?cursor=r01", "?limit=5", "?surface=web"} {
		if w := do(h, http.MethodGet, "/api/runs/stream"+q, "", "", ""); w.Code != 400 {
			t.Errorf("stream%s: %d, want 400", q, w.Code)
		}
	}
}

// disagree=shadow keeps the records whose shadow set would have decided
// otherwise, on the page and on the stream.
func TestAPIRunsShadowDisagree(t *testing.T) {
	st, err := sqlite.Open(t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for i, c := range []struct{ live, shadow string }{{"deny", "allow"}, {"allow", ""}, {"allow", "allow"}, {"allow", "deny"}, {"deny", "deny"}} {
		r := &audit.Record{ID: fmt.Sprintf("s%d", i), Time: apiBase.Add(time.Duration(i) * time.Second), Event: "steps/toolCallRequest",
			Surface: "aos", Decision: c.live, Results: []warden.Result{{Guardian: "policy", Decision: c.live, Mode: "enforce"}}}
		if c.shadow != "" {
			r.Results = append(r.Results, warden.Result{Guardian: warden.GuardianShadow, Kind: warden.KindShadowSet, Decision: c.shadow, Mode: warden.ModeShadow})
		}
		if err := st.Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	h := New(Options{Store: st})
	for _, tt := range []struct {
		query string
		want  []string
	}{
		{"?disagree=shadow", ids("s3", "s0")},
		{"?disagree=shadow&decision=deny", ids("s0")},
		{"?disagree=shadow&limit=1&cursor=s3", ids("s0")},
		{"?disagree=", ids("s4", "s3", "s2", "s1", "s0")},
	} {
		code, a, body := getRuns(t, h, "/api/runs"+tt.query, "")
		if code != 200 || !slices.Equal(a.ids(), tt.want) {
			t.Errorf("%s: %d %v, want %v (%s)", tt.query, code, a.ids(), tt.want, body)
		}
	}
	if q, _, err := parseRunsQuery(url.Values{"disagree": {"shadow"}}, false, time.Now()); err != nil || !q.ShadowDisagrees {
		t.Errorf("the stream's filters: %+v, %v", q, err)
	}
}

// Durations in since and until count back from now.
func TestAPIRunsDurations(t *testing.T) {
	st := storetest.NewMem()
	now := time.Now()
	for i, ago := range []time.Duration{3 * time.Hour, 90 * time.Minute, 10 * time.Minute, 0} {
		r := &audit.Record{ID: fmt.Sprint("d", i), Time: now.Add(-ago), Event: "e", Decision: "allow", Results: []warden.Result{}, Input: []byte(`{}`)}
		if err := st.Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	h := New(Options{Store: st})
	for q, want := range map[string][]string{
		"?since=2h":          ids("d3", "d2", "d1"),
		"?since=15m":         ids("d3", "d2"),
		"?until=1h":          ids("d1", "d0"),
		"?since=2h&until=1h": ids("d1"),
	} {
		if _, a, body := getRuns(t, h, "/api/runs"+q, ""); !slices.Equal(a.ids(), want) {
			t.Errorf("%s: %v, want %v (%s)", q, a.ids(), want, body)
		}
	}
}

// limits.runs_bytes bounds a page too: it ends early with a cursor, and
// paging on gives every record once.
func TestAPIRunsBytes(t *testing.T) {
	st := apiStore(t)
	one, _ := json.Marshal(apiRecords()[0])
	max := int64(runsPageReserve + 3*len(one) + 20)
	h := New(Options{Store: st, RunsBytes: max})
	var got []string
	cursor, pages := "", 0
	for {
		code, a, body := getRuns(t, h, "/api/runs?limit=500&cursor="+cursor, "")
		if code != 200 {
			t.Fatalf("%d %s", code, body)
		}
		if int64(len(body)) > max {
			t.Errorf("page of %d bytes, bound %d", len(body), max)
		}
		got = append(got, a.ids()...)
		pages++
		if a.NextCursor == "" {
			break
		}
		cursor = a.NextCursor
	}
	want := ids("r11", "r10", "r09", "r08", "r07", "r06", "r05", "r04", "r03", "r02", "r01", "r00")
	if !slices.Equal(got, want) || pages < 4 {
		t.Errorf("paged %v in %d pages, want %v in 4 or more", got, pages, want)
	}
}

// budgetStore spends every budget at once, as a long search would.
type budgetStore struct{ audit.Store }

func (b budgetStore) Scan(ctx context.Context, q audit.Query, fn func(*audit.Record) bool) error {
	if q.Budget > 0 {
		q.Budget = time.Nanosecond
	}
	return b.Store.Scan(ctx, q, fn)
}

// A scan that spends its budget answers with what it found, partial, and
// the cursor to go on from; going on finds every match once.
func TestAPIRunsPartial(t *testing.T) {
	h := New(Options{Store: budgetStore{apiStore(t)}})
	var got []string
	cursor, partials := "", 0
	for range 20 {
		code, a, body := getRuns(t, h, "/api/runs?q=report+3&cursor="+cursor, "")
		if code != 200 {
			t.Fatalf("%d %s", code, body)
		}
		got = append(got, a.ids()...)
		if a.Partial {
			partials++
			if a.Scanned < 1 || a.NextCursor == "" {
				t.Fatalf("partial answer without progress: %s", body)
			}
		}
		if a.NextCursor == "" {
			break
		}
		cursor = a.NextCursor
	}
	if !slices.Equal(got, ids("r08", "r03")) || partials == 0 {
		t.Errorf("found %v in %d partial answers, want [r08 r03] and some partial", got, partials)
	}
}

func TestAPIRunByID(t *testing.T) {
	h := New(Options{Store: apiStore(t)})
	w := do(h, http.MethodGet, "/api/runs/r04", "", "", "")
	var r audit.Record
	if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil || w.Code != 200 || r.ID != "r04" || r.Tool != "send_email" || string(r.Input) == "" {
		t.Fatalf("%d %s (%v)", w.Code, w.Body, err)
	}
	for _, path := range []string{"/api/runs/nope", "/api/runs/r04x"} {
		if w := do(h, http.MethodGet, path, "", "", ""); w.Code != 404 || !strings.Contains(w.Body.String(), "no record with id") {
			t.Errorf("%s: %d %s, want 404", path, w.Code, w.Body)
		}
	}
	if w := do(h, http.MethodGet, "/api/runs/r04?x=1", "", "", ""); w.Code != 400 {
		t.Errorf("a parameter: %d, want 400", w.Code)
	}
}

// A token with a tenant reads its tenant's records only, on every runs
// endpoint; another tenant's record is not found.
func TestAPIRunsTenants(t *testing.T) {
	const acmeRead, betaRead = "wdn_acme-read-0123456789", "wdn_beta-read-0123456789"
	c := testAuth(t)
	for _, e := range []struct{ name, tok, tenant string }{{"acme-viewer", acmeRead, "acme"}, {"beta-viewer", betaRead, "beta"}} {
		hash, err := auth.ParseHash(auth.Hash(e.tok))
		if err != nil {
			t.Fatal(err)
		}
		c.Tokens = append(c.Tokens, auth.Token{Name: e.name, SHA256: hash, Scopes: auth.Read, Tenant: e.tenant})
	}
	h := New(Options{Store: apiStore(t), Security: Security{Auth: c}})
	for _, tt := range []struct {
		tok, query string
		want       []string
	}{
		{acmeRead, "", ids("r11", "r10", "r09", "r08", "r07", "r06")},
		{acmeRead, "?decision=deny", ids("r10", "r06")},
		{acmeRead, "?q=report", ids("r11", "r10", "r09", "r08", "r07", "r06")},
		{betaRead, "", ids()},
		{tokRead, "?limit=2", ids("r11", "r10")},
		{tokAdmin, "?tool=bash&limit=3", ids("r11", "r10", "r09")},
	} {
		code, a, body := getRuns(t, h, "/api/runs"+tt.query, tt.tok)
		if code != 200 || !slices.Equal(a.ids(), tt.want) {
			t.Errorf("token %.12s… %s: %d %v, want %v (%s)", tt.tok, tt.query, code, a.ids(), tt.want, body)
		}
	}
	for _, tt := range []struct {
		tok, id string
		code    int
	}{
		{acmeRead, "r07", 200}, {acmeRead, "r01", 404}, {betaRead, "r07", 404}, {tokRead, "r01", 200},
		{"", "r01", 401}, {tokDecide, "r01", 403},
	} {
		if w := do(h, http.MethodGet, "/api/runs/"+tt.id, "", "", tt.tok); w.Code != tt.code {
			t.Errorf("token %.12s… /api/runs/%s: %d, want %d", tt.tok, tt.id, w.Code, tt.code)
		}
	}
	if w := do(h, http.MethodGet, "/api/runs", "", "", tokDecide); w.Code != 403 {
		t.Errorf("a decide token reads /api/runs: %d, want 403", w.Code)
	}
}

// stream opens /api/runs/stream on srv and returns its events, one per
// receive (comments as ": ..."), until the stream ends.
func stream(t *testing.T, ctx context.Context, url, tok string) (<-chan string, *http.Response) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan string, 100)
	if resp.StatusCode != 200 {
		resp.Body.Close()
		close(events)
		return events, resp
	}
	go func() {
		defer close(events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var ev []string
		for sc.Scan() {
			if sc.Text() == "" {
				events <- strings.Join(ev, "\n")
				ev = nil
				continue
			}
			ev = append(ev, sc.Text())
		}
	}()
	return events, resp
}

// next returns the next event that is not a keepalive, or fails.
func next(t *testing.T, events <-chan string) string {
	t.Helper()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("the stream ended")
			}
			if ev != ": keepalive" {
				return ev
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no event within 10s")
		}
	}
}

func TestRunsStream(t *testing.T) {
	st, err := sqlite.Open(t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rec := func(id, decision, tenant string) {
		t.Helper()
		r := &audit.Record{ID: id, Time: time.Now(), Event: "steps/message", Surface: "aos", Decision: decision,
			Tenant: tenant, Results: []warden.Result{}, Input: json.RawMessage(`{"text":"hello"}`)}
		if err := st.Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	rec("before", "deny", "") // recorded before subscribing: not streamed
	done := make(chan struct{})
	feedSrv := httptest.NewServer(New(Options{Store: st, RunsPoll: 20 * time.Millisecond, Done: done}))
	defer feedSrv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	all, _ := stream(t, ctx, feedSrv.URL+"/api/runs/stream", "")
	denies, _ := stream(t, ctx, feedSrv.URL+"/api/runs/stream?decision=deny", "")
	for _, ev := range []<-chan string{all, denies} {
		if got := next(t, ev); got != ": subscribed" {
			t.Fatalf("first event %q, want the subscribed comment", got)
		}
	}
	rec("a1", "allow", "")
	rec("d1", "deny", "acme")
	for _, tt := range []struct {
		events <-chan string
		want   []string
	}{{all, ids("a1", "d1")}, {denies, ids("d1")}} {
		for _, id := range tt.want {
			ev := next(t, tt.events)
			lines := strings.Split(ev, "\n")
			if len(lines) != 3 || lines[0] != "id: "+id || lines[1] != "event: run" || !strings.HasPrefix(lines[2], "data: {") {
				t.Fatalf("event %q, want record %s", ev, id)
			}
			var r audit.Record
			if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[2], "data: ")), &r); err != nil || r.ID != id {
				t.Fatalf("data of %s: %v %+v", id, err, r)
			}
		}
	}
	// Shutdown ends the streams.
	close(done)
	for _, ev := range []<-chan string{all, denies} {
		select {
		case _, ok := <-ev:
			for ok {
				_, ok = <-ev
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a stream outlived shutdown")
		}
	}
}

// A stream ends when its client goes away: the feed forgets it, and stops
// polling once no stream is left.
func TestRunsStreamEndsOnDisconnect(t *testing.T) {
	st := storetest.NewMem()
	f := newRunsFeed(st, 10*time.Millisecond, 2, nil)
	srv := httptest.NewServer(streamHandler(f))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	events, _ := stream(t, ctx, srv.URL, "")
	if got := next(t, events); got != ": subscribed" {
		t.Fatalf("first event %q", got)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	events2, _ := stream(t, ctx2, srv.URL, "")
	next(t, events2)
	// The bound: a third stream is refused.
	if _, resp := stream(t, context.Background(), srv.URL, ""); resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("third stream: %d, want 503 with Retry-After", resp.StatusCode)
	}
	cancel()
	cancel2()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.mu.Lock()
		n, running := len(f.subs), f.running
		f.mu.Unlock()
		if n == 0 && !running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the clients left: %d streams, feed running %v", n, running)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A tenant's stream carries its tenant's records only; heartbeats keep an
// idle stream alive.
func TestRunsStreamTenantAndHeartbeat(t *testing.T) {
	const acmeRead = "wdn_acme-read-0123456789"
	c := testAuth(t)
	hash, err := auth.ParseHash(auth.Hash(acmeRead))
	if err != nil {
		t.Fatal(err)
	}
	c.Tokens = append(c.Tokens, auth.Token{Name: "acme-viewer", SHA256: hash, Scopes: auth.Read, Tenant: "acme"})
	st := storetest.NewMem()
	f := newRunsFeed(st, 10*time.Millisecond, 0, nil)
	f.beat = 20 * time.Millisecond
	srv := httptest.NewServer(guard(Security{Auth: c}, nil, streamHandler(f)))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, _ := stream(t, ctx, srv.URL+"/api/runs/stream", acmeRead)
	if got := next(t, events); got != ": subscribed" {
		t.Fatalf("first event %q", got)
	}
	for i, tenant := range []string{"beta", "", "acme"} {
		r := &audit.Record{ID: fmt.Sprint("t", i), Time: time.Now(), Event: "e", Decision: "allow", Tenant: tenant, Results: []warden.Result{}, Input: []byte(`{}`)}
		if err := st.Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	if ev := next(t, events); !strings.HasPrefix(ev, "id: t2\n") {
		t.Errorf("acme's stream got %q, want only t2", ev)
	}
	beats := 0
	for beats < 2 {
		select {
		case ev := <-events:
			if ev != ": keepalive" {
				t.Fatalf("unexpected event %q", ev)
			}
			beats++
		case <-time.After(5 * time.Second):
			t.Fatal("no heartbeat")
		}
	}
	if _, resp := stream(t, ctx, srv.URL+"/api/runs/stream", ""); resp.StatusCode != 401 {
		t.Errorf("stream without a token: %d, want 401", resp.StatusCode)
	}
}

// A stream that falls behind by more than its buffer ends with "lagged",
// after the events before the first it missed.
func TestRunsStreamLagged(t *testing.T) {
	st := storetest.NewMem()
	f := newRunsFeed(st, time.Hour, 0, nil) // polled by hand
	s, err := f.subscribe(context.Background(), audit.Query{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range streamBuffer + 10 {
		r := &audit.Record{ID: fmt.Sprintf("l%03d", i), Time: time.Now(), Event: "e", Decision: "allow", Results: []warden.Result{}, Input: []byte(`{}`)}
		if err := st.Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.pollOnce(); n != streamBuffer+10 {
		t.Fatalf("poll read %d records", n)
	}
	select {
	case <-s.lagged:
	default:
		t.Fatal("not lagged")
	}
	if len(s.events) != streamBuffer || !strings.HasPrefix(string(<-s.events), "id: l000\n") {
		t.Errorf("%d events buffered", len(s.events))
	}
	f.unsubscribe(s)
}
