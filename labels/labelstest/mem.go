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

// Mem is a labels.Store in memory. Set Err to fail reads, AddErr to fail
// additions; M may be preset (keys are {tenant, session}).
type Mem struct {
	mu     sync.Mutex
	M      map[[2]string][]string
	reads  int
	Err    error
	AddErr error
}

// Reads returns how many times SessionLabels was called.
func (s *Mem) Reads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

// SessionLabels implements labels.Store.
func (s *Mem) SessionLabels(_ context.Context, tenant, session string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	if s.Err != nil {
		return nil, s.Err
	}
	return slices.Clone(s.M[[2]string{tenant, session}]), nil
}

// AddSessionLabels implements labels.Store.
func (s *Mem) AddSessionLabels(_ context.Context, tenant, session string, ls []string, _ time.Time) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.AddErr != nil {
		return nil, s.AddErr
	}
	if s.M == nil {
		s.M = map[[2]string][]string{}
	}
	k := [2]string{tenant, session}
	s.M[k] = labels.Merge(s.M[k], ls)
	return slices.Clone(s.M[k]), nil
}
