package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/wardenhq/warden"
)

// Mem is an in-memory warden.Store for tests. It meets the Store contract
// (TestMemStore runs the suite against it), keeps records in recording order
// for tests to inspect, and, while Err is set, fails every Record with it, as
// a full disk would.
type Mem struct {
	d      *memData
	mu     sync.Mutex
	closed bool
	// Err, when set, is returned by every Record (the record is not kept).
	Err error
}

// memData is what a Mem keeps; it outlives Close, as a database would.
type memData struct {
	mu   sync.Mutex
	recs []warden.Record // in recording order
}

var _ warden.Store = (*Mem)(nil)

// NewMem returns an empty store.
func NewMem() *Mem { return &Mem{d: &memData{}} }

// Reopen returns a new handle on m's records, as reopening a database would.
func (m *Mem) Reopen() *Mem { return &Mem{d: m.d} }

// Record keeps a copy of r.
func (m *Mem) Record(ctx context.Context, r *warden.Record) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("not recorded: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return errors.New("closed")
	}
	if m.Err != nil {
		return m.Err
	}
	c := *r
	c.Time = r.Time.Truncate(time.Microsecond).UTC()
	c.ReasonCodes = slices.Clone(r.ReasonCodes)
	c.Results = append([]warden.Result{}, r.Results...)
	c.Input, c.Output = slices.Clone(r.Input), slices.Clone(r.Output)
	m.d.mu.Lock()
	m.d.recs = append(m.d.recs, c)
	m.d.mu.Unlock()
	return nil
}

// Runs returns the matching records newest first (by time, then the later
// recorded first), at most f.Last (default warden.DefaultLast).
func (m *Mem) Runs(_ context.Context, f warden.Filter) ([]warden.Record, error) {
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	out := []warden.Record{}
	for i := len(m.d.recs) - 1; i >= 0; i-- {
		r := m.d.recs[i]
		if (f.Session == "" || r.SessionID == f.Session) && (f.Event == "" || r.Event == f.Event) &&
			(f.Decision == "" || r.Decision == f.Decision) {
			out = append(out, r)
		}
	}
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

// Records returns every record in recording order.
func (m *Mem) Records() []warden.Record {
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	return slices.Clone(m.d.recs)
}

// Reset forgets every record.
func (m *Mem) Reset() {
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	m.d.recs = nil
}

// Close makes later Records fail; the records stay readable.
func (m *Mem) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	return nil
}
