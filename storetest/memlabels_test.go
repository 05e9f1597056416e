package storetest_test

import (
	"testing"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/storetest"
)

func TestMemLabels(t *testing.T) {
	storetest.RunLabels(t, func(t *testing.T) warden.LabelStore {
		m := storetest.NewMem()
		t.Cleanup(func() { m.Close() })
		return m
	}, func(t *testing.T, s warden.LabelStore) warden.LabelStore {
		m := s.(*storetest.Mem)
		m.Close()
		return m.Reopen()
	})
}
