package warden

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestValidLabel(t *testing.T) {
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"read_private", true}, {"a", true}, {"x.y-z_9", true}, {strings.Repeat("a", MaxLabelLen), true},
		{"", false}, {"Read", false}, {"9lives", false}, {"_x", false}, {"with space", false},
		{"ünï", false}, {strings.Repeat("a", MaxLabelLen+1), false}, {"a/b", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := ValidLabel(tt.name); (err == nil) != tt.ok {
				t.Fatalf("ValidLabel(%q) = %v, want ok %v", tt.name, err, tt.ok)
			}
		})
	}
}

func TestMergeLabels(t *testing.T) {
	a := []string{"b", "a"}
	got := MergeLabels(a, []string{"c", "a", "b"})
	if !reflect.DeepEqual(got, []string{"a", "b", "c"}) || !reflect.DeepEqual(a, []string{"b", "a"}) {
		t.Fatalf("MergeLabels = %q (a now %q)", got, a)
	}
	if MergeLabels(nil, nil) != nil {
		t.Fatal("MergeLabels(nil, nil) is not nil")
	}
}

func TestProvenanceLabels(t *testing.T) {
	p := func(id, origin string, from ...string) Provenance {
		return Provenance{ID: id, Origin: origin, DerivedFrom: from}
	}
	for _, tt := range []struct {
		name string
		ps   []Provenance
		want []string
	}{
		{"none", nil, nil},
		{"user input", []Provenance{p("p1", OriginUserInput)}, nil},
		{"system", []Provenance{p("p1", OriginSystem)}, nil},
		{"tool output", []Provenance{p("p1", OriginToolOutput)}, []string{LabelUntrustedInput}},
		{"retrieved", []Provenance{p("p1", OriginRetrieved)}, []string{LabelUntrustedInput}},
		{"a2a inbound", []Provenance{p("p1", OriginA2AInbound)}, []string{LabelUntrustedInput}},
		{"external", []Provenance{p("p1", OriginUserInput), p("p2", OriginExternal)}, []string{LabelUntrustedInput}},
		{"agent generated from trusted", []Provenance{p("p1", OriginUserInput), p("p2", OriginAgentGenerated, "p1")}, nil},
		{"agent generated from untrusted", []Provenance{p("p1", OriginAgentGenerated, "p0", "p2"), p("p2", OriginAgentGenerated, "p3"),
			p("p3", OriginRetrieved)}, []string{LabelUntrustedInput}},
		{"agent generated, lineage elsewhere", []Provenance{p("p1", OriginAgentGenerated, "p9")}, nil},
		{"lineage cycle", []Provenance{p("p1", OriginAgentGenerated, "p2"), p("p2", OriginAgentGenerated, "p1")}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ProvenanceLabels(tt.ps); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ProvenanceLabels = %q, want %q", got, tt.want)
			}
		})
	}
}

// labelMem is a LabelStore in memory that counts reads and can fail.
type labelMem struct {
	mu     sync.Mutex
	m      map[[2]string][]string
	reads  int
	err    error
	addErr error
}

func (s *labelMem) SessionLabels(_ context.Context, tenant, session string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	if s.err != nil {
		return nil, s.err
	}
	return slices.Clone(s.m[[2]string{tenant, session}]), nil
}

func (s *labelMem) AddSessionLabels(_ context.Context, tenant, session string, ls []string, _ time.Time) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.addErr != nil {
		return nil, s.addErr
	}
	if s.m == nil {
		s.m = map[[2]string][]string{}
	}
	k := [2]string{tenant, session}
	s.m[k] = MergeLabels(s.m[k], ls)
	return slices.Clone(s.m[k]), nil
}

func TestLabelCache(t *testing.T) {
	ctx := context.Background()
	st := &labelMem{}
	c := NewLabelCache(st, 2, time.Minute)
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return now }
	if _, err := c.Add(ctx, "t", "s1", []string{"read_private"}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if ls, err := c.Labels(ctx, "t", "s1"); err != nil || !reflect.DeepEqual(ls, []string{"read_private"}) {
			t.Fatalf("Labels = %q, %v", ls, err)
		}
	}
	if st.reads != 0 {
		t.Fatalf("%d store reads for cached labels, want 0", st.reads)
	}
	// Another process adds a label: seen once the entry is older than the TTL.
	st.AddSessionLabels(ctx, "t", "s1", []string{"untrusted_input"}, now)
	now = now.Add(2 * time.Minute)
	if ls, _ := c.Labels(ctx, "t", "s1"); !reflect.DeepEqual(ls, []string{"read_private", "untrusted_input"}) || st.reads != 1 {
		t.Fatalf("after the TTL: %q, %d reads", ls, st.reads)
	}
	// Bounded: a third session evicts the least recently used.
	c.Labels(ctx, "t", "s2")
	c.Labels(ctx, "t", "s1")
	c.Labels(ctx, "t", "s3")
	if c.Len() != 2 {
		t.Fatalf("Len = %d, want 2", c.Len())
	}
	reads := st.reads
	c.Labels(ctx, "t", "s1") // kept: used more recently than s2
	if st.reads != reads {
		t.Fatal("s1 was evicted, want s2")
	}
	c.Labels(ctx, "t", "s2")
	if st.reads != reads+1 {
		t.Fatal("s2 was not evicted")
	}
	// Tenants are apart; a session without an id has no labels.
	if ls, _ := c.Labels(ctx, "u", "s1"); ls != nil {
		t.Fatalf("tenant u sees %q", ls)
	}
	if ls, err := c.Add(ctx, "t", "", []string{"x"}); ls != nil || err != nil {
		t.Fatalf("Add without a session = %q, %v", ls, err)
	}
	if _, err := c.Add(ctx, "t", "s1", []string{"Bad Label"}); err == nil {
		t.Fatal("Add of an invalid label succeeded")
	}
}

func TestLabelCacheMemoryOnly(t *testing.T) {
	ctx := context.Background()
	c := NewLabelCache(nil, 0, -1)
	c.Add(ctx, "", "s", []string{"b"})
	c.Add(ctx, "", "s", []string{"a", "b"})
	if ls, _ := c.Labels(ctx, "", "s"); !reflect.DeepEqual(ls, []string{"a", "b"}) {
		t.Fatalf("Labels = %q", ls)
	}
	var many []string
	for i := range MaxSessionLabels {
		many = append(many, fmt.Sprintf("l%d", i))
	}
	if _, err := c.Add(ctx, "", "s", many); !errors.Is(err, ErrTooManyLabels) {
		t.Fatalf("Add of too many = %v", err)
	}
}

// labelling is a handler that labels every event and reads session.labels
// the way a policy would (ev.SessionLabels).
func labelling(v Verdict, labels ...string) (Handler, *[][]string) {
	var seen [][]string
	return HandlerFunc(func(_ context.Context, ev *Event) (Decision, error) {
		seen = append(seen, ev.SessionLabels)
		return Decision{Verdict: v, PolicyID: "p", Labels: labels}, nil
	}), &seen
}

func TestDeciderLabels(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		verdict Verdict
		kept    bool
	}{
		{"allow", Allow, true}, {"modify", Modify, true}, {"abstain (default allow)", Abstain, true},
		{"deny", Deny, false}, {"ask", Ask, false}, {"defer", Defer, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ls := &labelMem{}
			st := &memStore{}
			h, seen := labelling(tt.verdict, "read_private")
			if tt.verdict == Modify {
				inner := h
				h = HandlerFunc(func(ctx context.Context, ev *Event) (Decision, error) {
					d, err := inner.Decide(ctx, ev)
					d.Payload = map[string]any{"changed": true}
					return d, err
				})
			}
			d := NewDecider(NewChain(Allow, Step{Name: "g", Handler: h}), nil, st, nil)
			d.SetLabels(NewLabelCache(ls, 0, 0))
			ev := func() *Event {
				return &Event{Name: "steps/toolCallRequest", SessionID: "s1", Principal: Principal{Tenant: "acme"},
					Payload: map[string]any{}, Provenance: []Provenance{{ID: "p1", Origin: OriginExternal}}}
			}
			out, err := d.Decide(ctx, ev())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(out.Labels, []string{"read_private", "untrusted_input"}) {
				t.Fatalf("outcome labels %q", out.Labels)
			}
			got, _ := ls.SessionLabels(ctx, "acme", "s1")
			rec := st.recs[0]
			last := rec.Results[len(rec.Results)-1]
			if !tt.kept {
				if got != nil || out.LabelsAdded != nil || last.Kind == KindLabels {
					t.Fatalf("a %s step kept labels %q (added %q, last result %+v)", tt.verdict, got, out.LabelsAdded, last)
				}
				return
			}
			want := []string{"read_private", "untrusted_input"}
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(out.LabelsAdded, want) {
				t.Fatalf("kept %q, added %q; want %q", got, out.LabelsAdded, want)
			}
			if last.Kind != KindLabels || !reflect.DeepEqual(last.Labels, want) || len(out.Results) != len(rec.Results)-1 {
				t.Fatalf("record results %+v (outcome has %d)", rec.Results, len(out.Results))
			}
			// The next step sees them, adds nothing, and its record lists none.
			if out, _ = d.Decide(ctx, ev()); out.LabelsAdded != nil {
				t.Fatalf("second step added %q", out.LabelsAdded)
			}
			if s := (*seen)[1]; !reflect.DeepEqual(s, want) {
				t.Fatalf("second step saw session labels %q", s)
			}
			if r := st.recs[1].Results; r[len(r)-1].Kind == KindLabels {
				t.Fatal("the second record lists labels it did not add")
			}
			if !strings.Contains(string(st.recs[1].Views), `"labels":["read_private","untrusted_input"]`) {
				t.Fatalf("views %s", st.recs[1].Views)
			}
			// Another tenant's session of the same id has none.
			e := ev()
			e.Principal.Tenant = "globex"
			e.Provenance = nil
			d.Decide(ctx, e)
			if s := (*seen)[2]; s != nil {
				t.Fatalf("tenant globex saw %q", s)
			}
		})
	}
}

func TestDeciderLabelsFailClosed(t *testing.T) {
	ctx := context.Background()
	h, _ := labelling(Allow, "read_private")
	for _, tt := range []struct {
		name      string
		read, add error
	}{
		{"read fails", errors.New("disk gone"), nil},
		{"add fails", nil, errors.New("disk full")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := &memStore{}
			d := NewDecider(NewChain(Allow, Step{Name: "g", Handler: h}), nil, st, nil)
			d.SetLabels(NewLabelCache(&labelMem{err: tt.read, addErr: tt.add}, 0, 0))
			out, _ := d.Decide(ctx, &Event{Name: "e", SessionID: "s1", Payload: map[string]any{}})
			if out.Verdict != Deny || !slices.Contains(out.ReasonCodes, CodeLabelsUnavailable) {
				t.Fatalf("outcome %v %q", out.Verdict, out.ReasonCodes)
			}
			if r := st.recs[0]; r.Decision != "deny" || !slices.Contains(r.ReasonCodes, CodeLabelsUnavailable) {
				t.Fatalf("record %s %q", r.Decision, r.ReasonCodes)
			}
		})
	}
}

// BenchmarkLabelCacheHit is the cost session labels add to a decision in
// the steady state: one cached lookup.
func BenchmarkLabelCacheHit(b *testing.B) {
	ctx := context.Background()
	c := NewLabelCache(&labelMem{}, 0, 0)
	c.Add(ctx, "acme", "s1", []string{"read_private", "untrusted_input"})
	b.ReportAllocs()
	for b.Loop() {
		if ls, _ := c.Labels(ctx, "acme", "s1"); len(ls) != 2 {
			b.Fatal(ls)
		}
	}
}

// labelBlind is a handler that says whether it reads session labels (a
// policy engine does, per event); it refuses to decide without labels it
// says it reads, as the engine does.
type labelBlind struct {
	uses   atomic.Bool
	labels []string
	onCall func(h *labelBlind) // before deciding
	seen   [][]string
	unread []bool
}

func (h *labelBlind) UsesSessionLabels(string) bool { return h.uses.Load() }

func (h *labelBlind) Decide(_ context.Context, ev *Event) (Decision, error) {
	if h.onCall != nil {
		h.onCall(h)
	}
	h.seen, h.unread = append(h.seen, ev.SessionLabels), append(h.unread, ev.LabelsUnread)
	if ev.LabelsUnread && h.uses.Load() {
		return Decision{}, ErrLabelsUnread
	}
	return Decision{Verdict: Allow, PolicyID: "p", Labels: h.labels}, nil
}

type shadowFunc func(ctx context.Context, ev *Event, live *Outcome) []Result

func (f shadowFunc) Shadow(ctx context.Context, ev *Event, live *Outcome) []Result {
	return f(ctx, ev, live)
}

// TestDeciderReadsLabelsOnlyWhenUsed: a step no part of whose chain reads
// session labels does not read them (over a fleet's store, a query a
// step), and its record says so; a step that sets labels still adds only
// the new ones; a shadow set or a chain that may read them makes the
// Decider read them; a reload between the Decider's look and the chain's
// run is caught and the step decided again, with its labels.
func TestDeciderReadsLabelsOnlyWhenUsed(t *testing.T) {
	ctx := context.Background()
	ev := func() *Event {
		return &Event{Name: "steps/toolCallRequest", SessionID: "s1", Principal: Principal{Tenant: "acme"}, Payload: map[string]any{}}
	}
	setup := func(h Handler, have ...string) (*Decider, *labelMem, *memStore) {
		ls := &labelMem{m: map[[2]string][]string{{"acme", "s1"}: have}}
		st := &memStore{}
		d := NewDecider(NewChain(Allow, Step{Name: "g", Handler: h}), nil, st, nil)
		// Every read goes to the store, as over PostgreSQL.
		d.SetLabels(NewLabelCache(ls, 0, time.Nanosecond))
		return d, ls, st
	}

	t.Run("unused: not read", func(t *testing.T) {
		h := &labelBlind{}
		d, ls, st := setup(h, "read_private")
		for range 3 {
			if out, err := d.Decide(ctx, ev()); err != nil || out.Verdict != Allow {
				t.Fatalf("%v %v", out.Verdict, err)
			}
		}
		if ls.reads != 0 || h.seen[0] != nil || !h.unread[0] {
			t.Fatalf("reads %d, seen %q, unread %v", ls.reads, h.seen, h.unread)
		}
		if v := string(st.recs[0].Views); !strings.Contains(v, `"session":{"id":"s1","labels_unread":true}`) {
			t.Fatalf("views %s", v)
		}
	})
	t.Run("unused, sets labels: only the new are added", func(t *testing.T) {
		h := &labelBlind{labels: []string{"read_private", "web"}}
		d, ls, st := setup(h, "read_private")
		out, err := d.Decide(ctx, ev())
		if err != nil || !reflect.DeepEqual(out.LabelsAdded, []string{"web"}) || ls.reads != 1 {
			t.Fatalf("added %q, err %v, reads %d", out.LabelsAdded, err, ls.reads)
		}
		if got, _ := ls.SessionLabels(ctx, "acme", "s1"); !reflect.DeepEqual(got, []string{"read_private", "web"}) {
			t.Fatalf("kept %q", got)
		}
		if r := st.recs[0].Results; r[len(r)-1].Kind != KindLabels || !reflect.DeepEqual(r[len(r)-1].Labels, []string{"web"}) {
			t.Fatalf("results %+v", r)
		}
		if out, _ = d.Decide(ctx, ev()); out.LabelsAdded != nil {
			t.Fatalf("second step added %q", out.LabelsAdded)
		}
	})
	t.Run("used: read", func(t *testing.T) {
		h := &labelBlind{}
		h.uses.Store(true)
		d, ls, st := setup(h, "read_private")
		d.Decide(ctx, ev())
		if ls.reads != 1 || !reflect.DeepEqual(h.seen[0], []string{"read_private"}) || h.unread[0] {
			t.Fatalf("reads %d, seen %q", ls.reads, h.seen)
		}
		if v := string(st.recs[0].Views); !strings.Contains(v, `"session":{"id":"s1","labels":["read_private"]}`) {
			t.Fatalf("views %s", v)
		}
	})
	t.Run("a shadow set that may: read", func(t *testing.T) {
		h := &labelBlind{}
		d, ls, _ := setup(h, "read_private")
		var shadowSaw []string
		d.SetShadow(shadowFunc(func(_ context.Context, ev *Event, _ *Outcome) []Result {
			shadowSaw = ev.SessionLabels
			return nil
		}))
		d.Decide(ctx, ev())
		if ls.reads != 1 || !reflect.DeepEqual(shadowSaw, []string{"read_private"}) {
			t.Fatalf("reads %d, the shadow saw %q", ls.reads, shadowSaw)
		}
	})
	t.Run("a reload meanwhile: decided again with labels", func(t *testing.T) {
		h := &labelBlind{}
		h.onCall = func(h *labelBlind) { h.uses.Store(true) } // the new set reads them
		d, ls, st := setup(h, "read_private")
		out, err := d.Decide(ctx, ev())
		if err != nil || out.Verdict != Allow || len(h.seen) != 2 || ls.reads != 1 {
			t.Fatalf("%v %v, calls %d, reads %d", out.Verdict, err, len(h.seen), ls.reads)
		}
		if !reflect.DeepEqual(h.seen[1], []string{"read_private"}) || h.unread[1] {
			t.Fatalf("second run saw %q (unread %v)", h.seen[1], h.unread[1])
		}
		if len(st.recs) != 1 || strings.Contains(string(st.recs[0].Views), "labels_unread") {
			t.Fatalf("records %d, views %s", len(st.recs), st.recs[0].Views)
		}
	})
	t.Run("a hook: read", func(t *testing.T) {
		hook, seen := labelling(Allow)
		d, ls, _ := setup(hook, "read_private")
		d.Decide(ctx, ev())
		if ls.reads != 1 || !reflect.DeepEqual((*seen)[0], []string{"read_private"}) {
			t.Fatalf("reads %d, seen %q", ls.reads, *seen)
		}
	})
}
