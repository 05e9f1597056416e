package labels

import (
	"context"
	"errors"
	"slices"
	"time"
)

// Rows are what a backend keeps of session labels: a row per (tenant,
// session, label). Rules gives them their meaning; a backend only moves
// them.
type Rows interface {
	// Labels returns the session's labels in a new slice.
	Labels(ctx context.Context, tenant, session string) ([]string, error)
	// Add calls fn with the session's labels and keeps those fn
	// returns, added at `at`, atomically; fn's error keeps none and is
	// Add's. Adds to one session take turns, also across the replicas
	// sharing the rows, so fn sees every label added before.
	Add(ctx context.Context, tenant, session string, at time.Time, fn func(have []string) (add []string, err error)) error
}

// Rules is the Store that keeps labels in Rows: validation, the union
// and MaxPerSession of every backend, written once.
type Rules struct{ Rows Rows }

var _ Store = Rules{}

// SessionLabels implements Store.
func (r Rules) SessionLabels(ctx context.Context, tenant, session string) ([]string, error) {
	ls, err := r.Rows.Labels(ctx, tenant, session)
	if len(ls) == 0 {
		return nil, err
	}
	slices.Sort(ls)
	return ls, err
}

// AddSessionLabels implements Store.
func (r Rules) AddSessionLabels(ctx context.Context, tenant, session string, add []string, at time.Time) ([]string, error) {
	if session == "" {
		return nil, errors.New("warden: session labels need a session id")
	}
	for _, l := range add {
		if err := Valid(l); err != nil {
			return nil, err
		}
	}
	var out []string
	err := r.Rows.Add(ctx, tenant, session, at, func(have []string) ([]string, error) {
		have = slices.Sorted(slices.Values(have))
		if out = Merge(have, add); len(out) > MaxPerSession {
			return nil, ErrTooMany
		}
		return Missing(have, out), nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
