package storetest

import (
	"context"
	"slices"
	"time"

	"github.com/wardenhq/warden/labels"
)

// Mem is a labels.Store: labels.Rules over each session's labels, sorted,
// in memory.

var _ labels.Store = (*Mem)(nil)

type memLabelKey struct{ tenant, session string }

// memLabelRows are a Mem's labels as labels.Rows.
type memLabelRows Mem

// labelRules is the labels.Store a Mem embeds (newLabels).
type labelRules = labels.Rules

func newLabels(m *Mem) labelRules { return labels.Rules{Rows: (*memLabelRows)(m)} }

func (r *memLabelRows) Labels(ctx context.Context, tenant, session string) (ls []string, err error) {
	err = (*Mem)(r).sessionRows(ctx, false, func(d *memData) { ls = slices.Clone(d.lbl[memLabelKey{tenant, session}]) })
	return ls, err
}

func (r *memLabelRows) Add(ctx context.Context, tenant, session string, _ time.Time, fn func([]string) ([]string, error)) (err error) {
	if lerr := (*Mem)(r).sessionRows(ctx, true, func(d *memData) {
		k := memLabelKey{tenant, session}
		var add []string
		if add, err = fn(d.lbl[k]); err == nil && len(add) > 0 {
			if d.lbl == nil {
				d.lbl = map[memLabelKey][]string{}
			}
			d.lbl[k] = labels.Merge(d.lbl[k], add)
		}
	}); lerr != nil {
		return lerr
	}
	return err
}
