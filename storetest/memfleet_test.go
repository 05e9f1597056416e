package storetest_test

import (
	"testing"

	"github.com/wardenhq/warden/storetest"
)

func TestMemFleet(t *testing.T) {
	storetest.RunFleet(t, func(t *testing.T) storetest.FleetStore {
		m := storetest.NewMem()
		t.Cleanup(func() { m.Close() })
		return m
	}, func(t *testing.T, s storetest.FleetStore) storetest.FleetStore {
		m := s.(*storetest.Mem)
		m.Close()
		return m.Reopen()
	})
}
