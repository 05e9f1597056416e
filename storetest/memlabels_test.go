package storetest_test

import (
	"testing"

	"github.com/wardenhq/warden/labels"

	"github.com/wardenhq/warden/storetest"
)

func TestMemLabels(t *testing.T) {
	storetest.RunLabels(t, func(t *testing.T) labels.Store {
		m := storetest.NewMem()
		t.Cleanup(func() { m.Close() })
		return m
	}, func(t *testing.T, s labels.Store) labels.Store {
		m := s.(*storetest.Mem)
		m.Close()
		return m.Reopen()
	})
}
