package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/internal/handlertest"
)

type memStore struct {
	mu   sync.Mutex
	recs []*audit.Record
	err  error
}

func (m *memStore) Record(ctx context.Context, r *audit.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	m.recs = append(m.recs, r)
	return nil
}

func (m *memStore) Scan(context.Context, audit.Query, func(*audit.Record) bool) error { return nil }

func (m *memStore) Close() error { return nil }

type countObserver struct{ n, errs int }

func (c *countObserver) Observe(ev *warden.Event, out *warden.Outcome, err error) {
	c.n++
	if err != nil {
		c.errs++
	}
}

func TestPipelineRecordsBeforeAnswering(t *testing.T) {
	st := &memStore{}
	obs := &countObserver{}
	d := New(Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "g", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Modify, PolicyID: "m"})}), Store: st, Observer: obs})
	ev := &warden.Event{Name: "steps/message", Surface: warden.SurfaceAOS, RequestID: "7", SessionID: "s", Agent: warden.Agent{ID: "a"},
		Payload: map[string]any{"x": 1.0}, Raw: []byte(`{"x":1}`)}
	out, err := d.Decide(context.Background(), ev)
	if err != nil || out.Verdict != warden.Modify {
		t.Fatalf("got %v, %v", out.Verdict, err)
	}
	if len(st.recs) != 1 {
		t.Fatalf("records = %d", len(st.recs))
	}
	r := st.recs[0]
	if r.ID != out.RecordID || r.Decision != "modify" || r.RequestID != "7" || r.SessionID != "s" || r.AgentID != "a" ||
		string(r.Input) != `{"x":1}` || !strings.Contains(string(r.Output), `"seen":"m"`) || len(r.Results) != 1 {
		t.Fatalf("record %+v", r)
	}
	if time.Since(r.Time) > time.Minute || r.Time.Location() != time.UTC {
		t.Fatalf("time %v", r.Time)
	}
	if obs.n != 1 || obs.errs != 0 {
		t.Fatalf("observer %+v", obs)
	}
	// A caller that went away: the step is denied (nobody waits for it) and
	// still recorded.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out, err = d.Decide(ctx, ev)
	if err != nil || out.Verdict != warden.Deny || len(st.recs) != 2 || st.recs[1].Decision != "deny" ||
		!strings.Contains(st.recs[1].Results[0].Error, "context canceled") {
		t.Fatalf("canceled caller: %v %+v %d", err, out, len(st.recs))
	}
}

func TestPipelineFailsClosedWhenTraceFails(t *testing.T) {
	st := &memStore{err: errors.New("database or disk is full")}
	obs := &countObserver{}
	d := New(Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "g", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Allow})}), Store: st, Observer: obs})
	out, err := d.Decide(context.Background(), &warden.Event{Name: "e", Payload: map[string]any{}})
	if !errors.Is(err, audit.ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
	if out.Verdict != warden.Deny || len(out.ReasonCodes) != 1 || out.ReasonCodes[0] != warden.CodeTraceUnavailable ||
		!strings.Contains(out.Reason, "disk is full") || out.RecordID != "" {
		t.Fatalf("outcome %+v", out)
	}
	if obs.errs != 1 {
		t.Fatalf("observer %+v", obs)
	}
}

// A record the filter cannot make fit to store (its originals could not be
// sealed) is not stored, and the step is denied as when the store fails.
func TestPipelineFailsClosedWhenFilterFails(t *testing.T) {
	st := &memStore{}
	obs := &countObserver{}
	filter := func(context.Context, *audit.Record) error { return errors.New("sealing: key store unreachable") }
	d := New(Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "g", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Allow})}),
		Store: st, Observer: obs, RecordFilter: filter})
	out, err := d.Decide(context.Background(), &warden.Event{Name: "e", Payload: map[string]any{}})
	if !errors.Is(err, audit.ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
	if out.Verdict != warden.Deny || len(out.ReasonCodes) != 1 || out.ReasonCodes[0] != warden.CodeTraceUnavailable ||
		!strings.Contains(out.Reason, "key store unreachable") || out.RecordID != "" || len(st.recs) != 0 {
		t.Fatalf("outcome %+v, %d records", out, len(st.recs))
	}
	if obs.errs != 1 {
		t.Fatalf("observer %+v", obs)
	}
}

func TestNewRecordEncodesPayloadWithoutRaw(t *testing.T) {
	r := audit.NewRecord(&warden.Event{Payload: map[string]any{"k": "v"}}, &warden.Outcome{Verdict: warden.Allow}, time.Now())
	var m map[string]any
	if err := json.Unmarshal(r.Input, &m); err != nil || m["k"] != "v" || r.Output != nil || r.Results == nil {
		t.Fatalf("record %+v", r)
	}
}

type asyncSeen struct{ evs []*warden.Event }

func (a *asyncSeen) RunAsync(ev *warden.Event) { a.evs = append(a.evs, ev) }

func TestPipelineRecordsThePrincipal(t *testing.T) {
	st := &memStore{}
	as := &asyncSeen{}
	d := New(Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "g", Handler: handlertest.Fixed(warden.Decision{Verdict: warden.Modify, PolicyID: "m"})}), Store: st, Async: as})
	ctx := warden.WithPrincipal(context.Background(), warden.Principal{Name: "agents", Tenant: "acme"})
	if _, err := d.Decide(ctx, &warden.Event{Name: "steps/message", Payload: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Decide(context.Background(), &warden.Event{Name: "steps/message", Payload: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if r := st.recs[0]; r.Caller != "agents" || r.Tenant != "acme" {
		t.Errorf("with a principal: caller %q tenant %q", r.Caller, r.Tenant)
	}
	if r := st.recs[1]; r.Caller != "" || r.Tenant != "" {
		t.Errorf("without: caller %q tenant %q", r.Caller, r.Tenant)
	}
	// The async hooks get the principal with the (modified) event, so their
	// records name the caller too.
	if len(as.evs) != 2 || as.evs[0].Principal != (warden.Principal{Name: "agents", Tenant: "acme"}) || as.evs[1].Principal != (warden.Principal{}) {
		t.Errorf("async events %+v", as.evs)
	}
	if p := warden.PrincipalFrom(context.Background()); p != (warden.Principal{}) {
		t.Errorf("PrincipalFrom(empty ctx) = %+v", p)
	}
}

// The record names the tool of the event's tool view, as the view builder
// made it (the trace's tool column: Query.Tool).
func TestRecordNamesTheTool(t *testing.T) {
	st := &memStore{}
	views := func(ev *warden.Event) { // as catalog.Views: the tool of a tool call, else none
		ev.Tool = warden.Tool{}
		if ev.Name == "steps/toolCallRequest" {
			ev.Tool = warden.Tool{Name: "send_email", ID: "t-1"}
		}
	}
	d := New(Options{Chain: warden.NewChain(warden.Allow), Views: views, Store: st})
	for _, name := range []string{"steps/toolCallRequest", "steps/message"} {
		if _, err := d.Decide(context.Background(), &warden.Event{Name: name, Payload: map[string]any{}, Tool: warden.Tool{Name: "set by the surface"}}); err != nil {
			t.Fatal(err)
		}
	}
	if st.recs[0].Tool != "send_email" {
		t.Errorf("tool call: record tool %q, want send_email", st.recs[0].Tool)
	}
	if st.recs[1].Tool != "" {
		t.Errorf("message: record tool %q, want none", st.recs[1].Tool)
	}
}
