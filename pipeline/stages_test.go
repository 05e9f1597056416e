package pipeline

import (
	"context"
	"reflect"
	"testing"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/labels"
	"github.com/wardenhq/warden/labels/labelstest"
)

type noApprovals struct{}

func (noApprovals) Use(context.Context, *warden.Event, string) (*approval.Approval, error) {
	return nil, nil
}

func (noApprovals) Open(context.Context, *warden.Event, *warden.Outcome, *audit.Record) (*approval.Approval, error) {
	return nil, nil
}

func (noApprovals) Await(_ context.Context, out warden.Outcome) warden.Outcome { return out }

// A Pipeline's stages are those of its features, always in one order.
func TestStages(t *testing.T) {
	cache := labels.NewCache(&labelstest.Mem{}, 0, 0)
	for _, tt := range []struct {
		name string
		opts Options
		want []string
	}{
		{"zero", Options{}, []string{"views", "chain"}},
		{"no trace", Options{Labels: cache, Shadow: &fixedShadow{}, Approvals: noApprovals{}, RecordFilter: func(context.Context, *audit.Record) error { return nil },
			Observer: &countObserver{}, Async: &asyncSeen{}},
			[]string{"views", "labels", "chain", "outcome labels", "keep labels", "observe", "async"}},
		{"a trace", Options{Store: &memStore{}}, []string{"views", "chain", "record", "store"}},
		{"all", Options{Store: &memStore{}, Labels: cache, Shadow: &fixedShadow{}, Approvals: noApprovals{},
			RecordFilter: func(context.Context, *audit.Record) error { return nil }, Observer: &countObserver{}, Async: &asyncSeen{}},
			[]string{"views", "labels", "chain", "outcome labels", "record", "shadow", "approval", "keep labels",
				"filter", "store", "open approval", "observe", "async"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := New(tt.opts).Stages(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("stages %q, want %q", got, tt.want)
			}
		})
	}
	// The zero Options decide: the empty chain allows.
	if out, err := New(Options{}).Decide(context.Background(), &warden.Event{Name: "e"}); err != nil || out.Verdict != warden.Allow {
		t.Errorf("zero Options: %v, %v", out.Verdict, err)
	}
}
