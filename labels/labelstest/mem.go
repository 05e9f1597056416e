// Package labelstest holds a labels.Store in memory for tests: it counts
// reads and fails on demand.
package labelstest

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/wardenhq/warden/labels"
)

// Mem is a labels.Store in memory: labels.Rules over rows in M, so it
// refuses what every store refuses. Set Err to fail reads, AddErr to fail
// additions; M may be preset (keys are {tenant, session}). The zero Mem
// is empty and ready.
type Mem struct {
	mu     sync.Mutex
	M      map[[2]string][]string
	reads  int
	Err    error
	AddErr error
}

// Reads returns how many times SessionLabels read the rows.
func (s *Mem) Reads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

// SessionLabels implements labels.Store (labels.Rules over s's rows).
func (s *Mem) SessionLabels(ctx context.Context, tenant, session string) ([]string, error) {
	return labels.Rules{Rows: (*rows)(s)}.SessionLabels(ctx, tenant, session)
}

// AddSessionLabels implements labels.Store (labels.Rules over s's rows).
func (s *Mem) AddSessionLabels(ctx context.Context, tenant, session string, add []string, at time.Time) ([]string, error) {
	return labels.Rules{Rows: (*rows)(s)}.AddSessionLabels(ctx, tenant, session, add, at)
}

// rows are a Mem's labels as labels.Rows.
type rows Mem

func (r *rows) Labels(_ context.Context, tenant, session string) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads++
	if r.Err != nil {
		return nil, r.Err
	}
	return slices.Clone(r.M[[2]string{tenant, session}]), nil
}

func (r *rows) Add(_ context.Context, tenant, session string, _ time.Time, fn func([]string) ([]string, error)) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.AddErr != nil {
		return r.AddErr
	}
	k := [2]string{tenant, session}
	add, err := fn(slices.Clone(r.M[k]))
	if err != nil || len(add) == 0 {
		return err
	}
	if r.M == nil {
		r.M = map[[2]string][]string{}
	}
	r.M[k] = labels.Merge(r.M[k], add)
	return nil
}
