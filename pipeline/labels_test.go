package pipeline

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/labels"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/labels/labelstest"
)

// labelling is a handler that labels every event and reads session.labels
// the way a policy would (ev.SessionLabels).
func labelling(v warden.Verdict, labels ...string) (warden.Handler, *[][]string) {
	var seen [][]string
	return warden.HandlerFunc(func(_ context.Context, ev *warden.Event) (warden.Decision, error) {
		seen = append(seen, ev.SessionLabels)
		return warden.Decision{Verdict: v, PolicyID: "p", Labels: labels}, nil
	}), &seen
}

func TestPipelineLabels(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		verdict warden.Verdict
		kept    bool
	}{
		{"allow", warden.Allow, true}, {"modify", warden.Modify, true}, {"abstain (default allow)", warden.Abstain, true},
		{"deny", warden.Deny, false}, {"ask", warden.Ask, false}, {"defer", warden.Defer, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ls := &labelstest.Mem{}
			st := &memStore{}
			h, seen := labelling(tt.verdict, "read_private")
			if tt.verdict == warden.Modify {
				inner := h
				h = warden.HandlerFunc(func(ctx context.Context, ev *warden.Event) (warden.Decision, error) {
					d, err := inner.Decide(ctx, ev)
					d.Payload = map[string]any{"changed": true}
					return d, err
				})
			}
			d := New(Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "g", Handler: h}), Store: st, Labels: labels.NewCache(ls, 0, 0)})
			ev := func() *warden.Event {
				return &warden.Event{Name: "steps/toolCallRequest", SessionID: "s1", Principal: warden.Principal{Tenant: "acme"},
					Payload: map[string]any{}, Provenance: []warden.Provenance{{ID: "p1", Origin: warden.OriginExternal}}}
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
				if got != nil || out.LabelsAdded != nil || last.Kind == warden.KindLabels {
					t.Fatalf("a %s step kept labels %q (added %q, last result %+v)", tt.verdict, got, out.LabelsAdded, last)
				}
				return
			}
			want := []string{"read_private", "untrusted_input"}
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(out.LabelsAdded, want) {
				t.Fatalf("kept %q, added %q; want %q", got, out.LabelsAdded, want)
			}
			if last.Kind != warden.KindLabels || !reflect.DeepEqual(last.Labels, want) || len(out.Results) != len(rec.Results)-1 {
				t.Fatalf("record results %+v (outcome has %d)", rec.Results, len(out.Results))
			}
			// The next step sees them, adds nothing, and its record lists none.
			if out, _ = d.Decide(ctx, ev()); out.LabelsAdded != nil {
				t.Fatalf("second step added %q", out.LabelsAdded)
			}
			if s := (*seen)[1]; !reflect.DeepEqual(s, want) {
				t.Fatalf("second step saw session labels %q", s)
			}
			if r := st.recs[1].Results; r[len(r)-1].Kind == warden.KindLabels {
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

func TestPipelineLabelsFailClosed(t *testing.T) {
	ctx := context.Background()
	h, _ := labelling(warden.Allow, "read_private")
	for _, tt := range []struct {
		name      string
		read, add error
	}{
		{"read fails", errors.New("disk gone"), nil},
		{"add fails", nil, errors.New("disk full")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := &memStore{}
			d := New(Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "g", Handler: h}), Store: st,
				Labels: labels.NewCache(&labelstest.Mem{Err: tt.read, AddErr: tt.add}, 0, 0)})
			out, _ := d.Decide(ctx, &warden.Event{Name: "e", SessionID: "s1", Payload: map[string]any{}})
			if out.Verdict != warden.Deny || !slices.Contains(out.ReasonCodes, labels.CodeUnavailable) {
				t.Fatalf("outcome %v %q", out.Verdict, out.ReasonCodes)
			}
			if r := st.recs[0]; r.Decision != "deny" || !slices.Contains(r.ReasonCodes, labels.CodeUnavailable) {
				t.Fatalf("record %s %q", r.Decision, r.ReasonCodes)
			}
		})
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

func (h *labelBlind) Decide(_ context.Context, ev *warden.Event) (warden.Decision, error) {
	if h.onCall != nil {
		h.onCall(h)
	}
	h.seen, h.unread = append(h.seen, ev.SessionLabels), append(h.unread, ev.LabelsUnread)
	if ev.LabelsUnread && h.uses.Load() {
		return warden.Decision{}, labels.ErrUnread
	}
	return warden.Decision{Verdict: warden.Allow, PolicyID: "p", Labels: h.labels}, nil
}

type shadowFunc func(ctx context.Context, ev *warden.Event, live *warden.Outcome) []warden.Result

func (f shadowFunc) Shadow(ctx context.Context, ev *warden.Event, live *warden.Outcome) []warden.Result {
	return f(ctx, ev, live)
}

// TestPipelineReadsLabelsOnlyWhenUsed: a step no part of whose chain reads
// session labels does not read them (over a fleet's store, a query a
// step), and its record says so; a step that sets labels still adds only
// the new ones; a shadow set or a chain that may read them makes the
// Pipeline read them; a reload between the Pipeline's look and the chain's
// run is caught and the step decided again, with its labels.
func TestPipelineReadsLabelsOnlyWhenUsed(t *testing.T) {
	ctx := context.Background()
	ev := func() *warden.Event {
		return &warden.Event{Name: "steps/toolCallRequest", SessionID: "s1", Principal: warden.Principal{Tenant: "acme"}, Payload: map[string]any{}}
	}
	setupShadow := func(h warden.Handler, sh Shadow, have ...string) (*Pipeline, *labelstest.Mem, *memStore) {
		ls := &labelstest.Mem{M: map[[2]string][]string{{"acme", "s1"}: have}}
		st := &memStore{}
		d := New(Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "g", Handler: h}), Store: st, Shadow: sh,
			// Every read goes to the store, as over PostgreSQL.
			Labels: labels.NewCache(ls, 0, time.Nanosecond)})
		return d, ls, st
	}
	setup := func(h warden.Handler, have ...string) (*Pipeline, *labelstest.Mem, *memStore) {
		return setupShadow(h, nil, have...)
	}

	t.Run("unused: not read", func(t *testing.T) {
		h := &labelBlind{}
		d, ls, st := setup(h, "read_private")
		for range 3 {
			if out, err := d.Decide(ctx, ev()); err != nil || out.Verdict != warden.Allow {
				t.Fatalf("%v %v", out.Verdict, err)
			}
		}
		if ls.Reads() != 0 || h.seen[0] != nil || !h.unread[0] {
			t.Fatalf("reads %d, seen %q, unread %v", ls.Reads(), h.seen, h.unread)
		}
		if v := string(st.recs[0].Views); !strings.Contains(v, `"session":{"id":"s1","labels_unread":true}`) {
			t.Fatalf("views %s", v)
		}
	})
	t.Run("unused, sets labels: only the new are added", func(t *testing.T) {
		h := &labelBlind{labels: []string{"read_private", "web"}}
		d, ls, st := setup(h, "read_private")
		out, err := d.Decide(ctx, ev())
		if err != nil || !reflect.DeepEqual(out.LabelsAdded, []string{"web"}) || ls.Reads() != 1 {
			t.Fatalf("added %q, err %v, reads %d", out.LabelsAdded, err, ls.Reads())
		}
		if got, _ := ls.SessionLabels(ctx, "acme", "s1"); !reflect.DeepEqual(got, []string{"read_private", "web"}) {
			t.Fatalf("kept %q", got)
		}
		if r := st.recs[0].Results; r[len(r)-1].Kind != warden.KindLabels || !reflect.DeepEqual(r[len(r)-1].Labels, []string{"web"}) {
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
		if ls.Reads() != 1 || !reflect.DeepEqual(h.seen[0], []string{"read_private"}) || h.unread[0] {
			t.Fatalf("reads %d, seen %q", ls.Reads(), h.seen)
		}
		if v := string(st.recs[0].Views); !strings.Contains(v, `"session":{"id":"s1","labels":["read_private"]}`) {
			t.Fatalf("views %s", v)
		}
	})
	t.Run("a shadow set that may: read", func(t *testing.T) {
		h := &labelBlind{}
		var shadowSaw []string
		d, ls, _ := setupShadow(h, shadowFunc(func(_ context.Context, ev *warden.Event, _ *warden.Outcome) []warden.Result {
			shadowSaw = ev.SessionLabels
			return nil
		}), "read_private")
		d.Decide(ctx, ev())
		if ls.Reads() != 1 || !reflect.DeepEqual(shadowSaw, []string{"read_private"}) {
			t.Fatalf("reads %d, the shadow saw %q", ls.Reads(), shadowSaw)
		}
	})
	t.Run("a reload meanwhile: decided again with labels", func(t *testing.T) {
		h := &labelBlind{}
		h.onCall = func(h *labelBlind) { h.uses.Store(true) } // the new set reads them
		d, ls, st := setup(h, "read_private")
		out, err := d.Decide(ctx, ev())
		if err != nil || out.Verdict != warden.Allow || len(h.seen) != 2 || ls.Reads() != 1 {
			t.Fatalf("%v %v, calls %d, reads %d", out.Verdict, err, len(h.seen), ls.Reads())
		}
		if !reflect.DeepEqual(h.seen[1], []string{"read_private"}) || h.unread[1] {
			t.Fatalf("second run saw %q (unread %v)", h.seen[1], h.unread[1])
		}
		if len(st.recs) != 1 || strings.Contains(string(st.recs[0].Views), "labels_unread") {
			t.Fatalf("records %d, views %s", len(st.recs), st.recs[0].Views)
		}
	})
	t.Run("a hook: read", func(t *testing.T) {
		hook, seen := labelling(warden.Allow)
		d, ls, _ := setup(hook, "read_private")
		d.Decide(ctx, ev())
		if ls.Reads() != 1 || !reflect.DeepEqual((*seen)[0], []string{"read_private"}) {
			t.Fatalf("reads %d, seen %q", ls.Reads(), *seen)
		}
	})
}
