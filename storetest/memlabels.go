package storetest

import (
	"context"
	"errors"
	"time"

	"github.com/wardenhq/warden/labels"
)

// Mem is a labels.Store: each session's labels, sorted, in memory.

var _ labels.Store = (*Mem)(nil)

type memLabelKey struct{ tenant, session string }

// SessionLabels returns a copy of the session's labels, sorted; nil for none.
func (m *Mem) SessionLabels(ctx context.Context, tenant, session string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	ls := m.d.lbl[memLabelKey{tenant, session}]
	if len(ls) == 0 {
		return nil, nil
	}
	return append([]string(nil), ls...), nil
}

// AddSessionLabels adds labels to the session, all or none, and returns a
// copy of its labels after the change.
func (m *Mem) AddSessionLabels(ctx context.Context, tenant, session string, add []string, _ time.Time) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if session == "" {
		return nil, errors.New("storetest: session add need a session id")
	}
	for _, l := range add {
		if err := labels.Valid(l); err != nil {
			return nil, err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errors.New("closed")
	}
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	k := memLabelKey{tenant, session}
	all := labels.Merge(m.d.lbl[k], add)
	if len(all) > labels.MaxPerSession {
		return nil, labels.ErrTooMany
	}
	if m.d.lbl == nil {
		m.d.lbl = map[memLabelKey][]string{}
	}
	m.d.lbl[k] = all
	return append([]string(nil), all...), nil
}
