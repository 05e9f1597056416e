package stats

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden"
)

// clock is a settable time for tests.
type clock struct{ t atomic.Int64 }

func newClock(t time.Time) *clock { c := &clock{}; c.t.Store(t.UnixNano()); return c }
func (c *clock) now() time.Time   { return time.Unix(0, c.t.Load()) }
func (c *clock) add(d time.Duration) {
	c.t.Add(int64(d))
}

var t0 = time.Date(2026, 11, 21, 10, 0, 30, 0, time.UTC)

// decision is an Observe call's arguments (recorded: no error).
func decision(v warden.Verdict, lat time.Duration, tool, policy string, results ...warden.Result) (*warden.Event, *warden.Outcome, error) {
	return &warden.Event{Name: "steps/toolCallRequest", Tool: warden.Tool{Name: tool}},
		&warden.Outcome{Verdict: v, Latency: lat, PolicyID: policy, Results: results}, nil
}

func TestHistogramBuckets(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want int
	}{
		{0, 0}, {500 * time.Nanosecond, 0}, {time.Microsecond, 1}, {2 * time.Microsecond, 5},
		{3 * time.Microsecond, 7}, {4 * time.Microsecond, 9}, {5 * time.Microsecond, 10},
		{time.Hour, histBuckets - 1},
	}
	for _, tt := range tests {
		t.Run(tt.d.String(), func(t *testing.T) {
			if got := histIndex(tt.d); got != tt.want {
				t.Errorf("histIndex(%v) = %d, want %d", tt.d, got, tt.want)
			}
		})
	}
	// Every latency falls below its bucket's upper bound, within 25% of it,
	// and the bounds grow.
	for us := int64(1); us < 1<<histOctaves; us = us*9/8 + 1 {
		d := time.Duration(us) * time.Microsecond
		i := histIndex(d)
		up := histUpper(i)
		if d >= up || float64(up) > float64(d)*1.26+float64(time.Microsecond) {
			t.Fatalf("%v in bucket %d with upper bound %v", d, i, up)
		}
		if i > 0 && histUpper(i-1) >= up {
			t.Fatalf("bucket bounds do not grow at %d", i)
		}
	}
}

func TestObserveSummary(t *testing.T) {
	c := newClock(t0)
	o := New(c.now)
	pol := func(id, mode string) warden.Result {
		return warden.Result{Guardian: "policy", PolicyID: id, Mode: mode}
	}
	steps := []struct {
		v      warden.Verdict
		lat    time.Duration
		tool   string
		policy string
		res    []warden.Result
		err    error
	}{
		{warden.Allow, 10 * time.Microsecond, "read_file", "", nil, nil},
		{warden.Allow, 10 * time.Microsecond, "read_file", "", []warden.Result{pol("watch", "audit")}, nil},
		{warden.Deny, 20 * time.Microsecond, "http_post", "no-secrets", []warden.Result{pol("no-secrets", "enforce"), pol("watch", "audit")}, nil},
		{warden.Deny, 20 * time.Microsecond, "http_post", "no-secrets", []warden.Result{pol("no-secrets", "enforce")}, nil},
		{warden.Deny, 40 * time.Microsecond, "rm", "no-rm", []warden.Result{pol("no-rm", "enforce")}, nil},
		{warden.Modify, 30 * time.Microsecond, "", "redact", []warden.Result{pol("redact", "enforce")}, nil},
		{warden.Ask, 30 * time.Microsecond, "send_email", "email", []warden.Result{pol("email", "enforce")}, nil},
		{warden.Allow, 5 * time.Millisecond, "x", "", nil, errors.New("disk full")},
	}
	for _, s := range steps {
		ev, out, _ := decision(s.v, s.lat, s.tool, s.policy, s.res...)
		o.Observe(ev, out, s.err)
	}
	c.add(2 * time.Minute)
	o.Observe(decision(warden.Deny, 50*time.Microsecond, "http_post", "no-secrets", pol("no-secrets", "enforce")))

	t.Run("last minute", func(t *testing.T) {
		s := o.Summary("", time.Minute, 10)
		if s.Outcomes.Total() != 1 || s.Outcomes[Deny] != 1 {
			t.Errorf("outcomes %v", s.Outcomes)
		}
	})
	t.Run("last hour", func(t *testing.T) {
		s := o.Summary("", time.Hour, 10)
		want := Counts{Allow: 2, Modify: 1, Ask: 1, Deny: 4, Error: 1}
		if s.Outcomes != want {
			t.Errorf("outcomes %v, want %v", s.Outcomes, want)
		}
		if fmt.Sprint(s.DeniedTools) != "[{http_post 3} {rm 1}]" {
			t.Errorf("denied tools %v", s.DeniedTools)
		}
		if fmt.Sprint(s.DeniedPolicies) != "[{no-secrets 3} {no-rm 1}]" {
			t.Errorf("denied policies %v", s.DeniedPolicies)
		}
		if got := s.Policies["watch"]; got != (PolicyCount{Matched: 2}) {
			t.Errorf("audit policy %+v: matched, never decided", got)
		}
		if got := s.Policies["no-secrets"]; got != (PolicyCount{Matched: 3, Decided: 3}) {
			t.Errorf("no-secrets %+v", got)
		}
		if s.P50 < 30*time.Microsecond || s.P50 > 38*time.Microsecond { // the 5th of 9
			t.Errorf("p50 %v, want about 30µs", s.P50)
		}
		if s.P99 < 5*time.Millisecond || s.P99 > 7*time.Millisecond {
			t.Errorf("p99 %v, want about 5ms", s.P99)
		}
	})
	t.Run("top 1", func(t *testing.T) {
		if s := o.Summary("", time.Hour, 1); len(s.DeniedTools) != 1 || s.DeniedTools[0].Key != "http_post" {
			t.Errorf("top 1: %v", s.DeniedTools)
		}
	})
	t.Run("series", func(t *testing.T) {
		pts := o.Series("", 5)
		if len(pts) != 5 {
			t.Fatalf("%d points", len(pts))
		}
		if !pts[4].Time.Equal(time.Date(2026, 11, 21, 10, 2, 0, 0, time.UTC)) {
			t.Errorf("last point at %v", pts[4].Time)
		}
		if pts[2].Outcomes.Total() != 8 || pts[3].Outcomes.Total() != 0 || pts[4].Outcomes[Deny] != 1 {
			t.Errorf("series %+v", pts)
		}
		if pts[4].P50 == 0 || pts[3].P50 != 0 {
			t.Errorf("latency of the series %+v", pts)
		}
	})
	t.Run("a day later the minutes are reused", func(t *testing.T) {
		c.add(24 * time.Hour)
		o.Observe(decision(warden.Allow, time.Microsecond, "", ""))
		if s := o.Summary("", 24*time.Hour, 10); s.Outcomes.Total() != 1 || len(s.Policies) != 0 {
			t.Errorf("after a day: %+v", s)
		}
	})
}

// More distinct tools or policies than MaxKeys in a minute go under Other.
func TestKeysBounded(t *testing.T) {
	o := New(newClock(t0).now)
	for i := range MaxKeys + 50 {
		id := fmt.Sprintf("p%d", i)
		o.Observe(decision(warden.Deny, time.Microsecond, fmt.Sprintf("t%d", i), id, warden.Result{PolicyID: id}))
	}
	s := o.Summary("", time.Minute, -1)
	if len(s.DeniedTools) != MaxKeys+1 || len(s.Policies) != MaxKeys+1 || len(s.DeniedPolicies) != MaxKeys+1 {
		t.Fatalf("keys: %d tools, %d policies, %d denied policies", len(s.DeniedTools), len(s.Policies), len(s.DeniedPolicies))
	}
	if s.DeniedTools[0] != (Count{Other, 50}) {
		t.Errorf("top: %v", s.DeniedTools[0])
	}
}

func TestConcurrent(t *testing.T) {
	o := New(nil)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				o.Observe(decision(warden.Deny, time.Duration(i)*time.Microsecond, "t", fmt.Sprint("p", g), warden.Result{PolicyID: fmt.Sprint("p", g)}))
				if i%100 == 0 {
					_ = o.Summary("", time.Hour, 5)
					_ = o.Series("", 60)
				}
			}
		}()
	}
	wg.Wait()
	if s := o.Summary("", time.Hour, 5); s.Outcomes[Deny] != 4000 {
		t.Errorf("counted %d", s.Outcomes[Deny])
	}
}

// BenchmarkObserve is the cost Observe adds to every decision: a deny with
// two policy results (the busiest path).
func BenchmarkObserve(b *testing.B) {
	o := New(nil)
	ev, out, _ := decision(warden.Deny, 42*time.Microsecond, "http_post", "no-secrets",
		warden.Result{PolicyID: "no-secrets", Mode: "enforce"}, warden.Result{PolicyID: "watch", Mode: "audit"})
	b.ReportAllocs()
	for b.Loop() {
		o.Observe(ev, out, nil)
	}
}

// BenchmarkObserveParallel is Observe from every core at once.
func BenchmarkObserveParallel(b *testing.B) {
	o := New(nil)
	ev, out, _ := decision(warden.Deny, 42*time.Microsecond, "http_post", "no-secrets",
		warden.Result{PolicyID: "no-secrets", Mode: "enforce"}, warden.Result{PolicyID: "watch", Mode: "audit"})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			o.Observe(ev, out, nil)
		}
	})
}

// BenchmarkSummaryDay is the policies page's read: a day of minutes.
func BenchmarkSummaryDay(b *testing.B) {
	c := newClock(t0)
	o := New(c.now)
	for range Minutes {
		for i := range 20 {
			id := fmt.Sprint("p", i)
			o.Observe(decision(warden.Deny, 42*time.Microsecond, fmt.Sprint("t", i), id, warden.Result{PolicyID: id}))
		}
		c.add(time.Minute)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = o.Summary("", 24*time.Hour, 10)
	}
}
