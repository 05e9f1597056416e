package storetest

import (
	"context"
	"errors"
	"time"

	"github.com/wardenhq/warden"
)

// Mem is a warden.LabelStore: each session's labels, sorted, in memory.

var _ warden.LabelStore = (*Mem)(nil)

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
func (m *Mem) AddSessionLabels(ctx context.Context, tenant, session string, labels []string, _ time.Time) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if session == "" {
		return nil, errors.New("storetest: session labels need a session id")
	}
	for _, l := range labels {
		if err := warden.ValidLabel(l); err != nil {
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
	all := warden.MergeLabels(m.d.lbl[k], labels)
	if len(all) > warden.MaxSessionLabels {
		return nil, warden.ErrTooManyLabels
	}
	if m.d.lbl == nil {
		m.d.lbl = map[memLabelKey][]string{}
	}
	m.d.lbl[k] = all
	return append([]string(nil), all...), nil
}
