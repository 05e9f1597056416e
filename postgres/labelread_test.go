package postgres

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestFleetLabelsNextStep: while 32 goroutines keep replica b's label
// reads grouped (each query answers many), a label replica a adds is seen
// by b's very next read, round after round: a grouped read is never
// answered from a query that started before it was asked.
func TestFleetLabelsNextStep(t *testing.T) {
	a, b := fleet(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var background atomic.Int64
	for w := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if _, err := b.SessionLabels(ctx, "acme", fmt.Sprintf("bg%d", w%4)); err != nil && ctx.Err() == nil {
					t.Error(err)
					return
				}
				background.Add(1)
			}
		}()
	}
	defer func() { cancel(); wg.Wait() }()
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for i := range 100 {
		session := fmt.Sprintf("s%d", i%5)
		from, to := a, b
		if i%3 == 2 {
			from, to = b, a
		}
		before, err := to.SessionLabels(context.Background(), "acme", session)
		if err != nil {
			t.Fatal(err)
		}
		l := fmt.Sprintf("l%02d", i)
		if _, err := from.AddSessionLabels(context.Background(), "acme", session, []string{l}, at); err != nil {
			t.Fatal(err)
		}
		after, err := to.SessionLabels(context.Background(), "acme", session)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(after, l) || len(after) != len(before)+1 {
			t.Fatalf("round %d: the other replica reads %q right after %q was added (before: %q)", i, after, l, before)
		}
	}
	if background.Load() == 0 {
		t.Fatal("no background read completed")
	}
}

// TestGroupedLabelReads: concurrent reads of many sessions (one with a NUL
// in its id, one of another tenant) each get their own session's labels.
func TestGroupedLabelReads(t *testing.T) {
	s := openTest(t, testSchemaURL(t), Options{})
	ctx := context.Background()
	type sess struct{ tenant, id string }
	var all []sess
	for i := range 20 {
		all = append(all, sess{"acme", fmt.Sprintf("s%d", i)})
	}
	all = append(all, sess{"acme", "nul\x00id"}, sess{"other", "s1"}, sess{"", "s1"})
	want := map[sess][]string{}
	for i, x := range all {
		if i%4 == 3 {
			continue // no labels
		}
		ls := []string{fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i)}
		slices.Sort(ls)
		if _, err := s.AddSessionLabels(ctx, x.tenant, x.id, ls, time.Now()); err != nil {
			t.Fatal(err)
		}
		want[x] = ls
	}
	var wg sync.WaitGroup
	for range 8 {
		for _, x := range all {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := s.SessionLabels(ctx, x.tenant, x.id)
				if err != nil {
					t.Error(err)
					return
				}
				if !slices.Equal(got, want[x]) {
					t.Errorf("%q/%q: labels %q, want %q", x.tenant, x.id, got, want[x])
				}
			}()
		}
	}
	wg.Wait()
	// A read whose caller already gave up is answered with its context's
	// error, and does not fail the reads queued with it.
	dead, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.SessionLabels(dead, "acme", "s0"); err == nil {
		t.Fatal("a read with a canceled context succeeded")
	}
	if got, err := s.SessionLabels(ctx, "acme", "s0"); err != nil || !slices.Equal(got, want[all[0]]) {
		t.Fatalf("after a canceled read: %q, %v", got, err)
	}
}
