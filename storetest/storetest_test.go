package storetest_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/storetest"
)

// memData is what a memStore keeps; it outlives Close, as a database would.
type memData struct {
	mu   sync.Mutex
	recs []warden.Record // in recording order
}

// memStore is a minimal reference implementation of the contract, checking
// that the suite itself is consistent.
type memStore struct {
	d      *memData
	mu     sync.Mutex
	closed bool
}

func (s *memStore) Record(ctx context.Context, r *warden.Record) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("not recorded: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("closed")
	}
	c := *r
	c.Time = r.Time.Truncate(time.Microsecond).UTC()
	c.ReasonCodes = slices.Clone(r.ReasonCodes)
	c.Results = append([]warden.Result{}, r.Results...)
	c.Input, c.Output = slices.Clone(r.Input), slices.Clone(r.Output)
	s.d.mu.Lock()
	s.d.recs = append(s.d.recs, c)
	s.d.mu.Unlock()
	return nil
}

func (s *memStore) Runs(_ context.Context, f warden.Filter) ([]warden.Record, error) {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	out := []warden.Record{}
	for i := len(s.d.recs) - 1; i >= 0; i-- {
		r := s.d.recs[i]
		if (f.Session == "" || r.SessionID == f.Session) && (f.Event == "" || r.Event == f.Event) &&
			(f.Decision == "" || r.Decision == f.Decision) {
			out = append(out, r)
		}
	}
	// Newest first; among equal times the later recorded (already first).
	slices.SortStableFunc(out, func(a, b warden.Record) int { return b.Time.Compare(a.Time) })
	last := f.Last
	if last <= 0 {
		last = warden.DefaultLast
	}
	if len(out) > last {
		out = out[:last]
	}
	return out, nil
}

func (s *memStore) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return nil
}

func TestMemStore(t *testing.T) {
	var mu sync.Mutex
	data := map[*testing.T]*memData{}
	storetest.Run(t, func(t *testing.T) warden.Store {
		mu.Lock()
		defer mu.Unlock()
		d, ok := data[t]
		if !ok {
			d = &memData{}
			data[t] = d
		}
		return &memStore{d: d}
	})
}
