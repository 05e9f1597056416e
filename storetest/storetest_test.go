package storetest_test

import (
	"sync"
	"testing"

	"github.com/wardenhq/warden/acsstate"
	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden/storetest"
)

func TestMemStore(t *testing.T) {
	var mu sync.Mutex
	stores := map[*testing.T]*storetest.Mem{}
	storetest.Run(t, func(t *testing.T) audit.Store {
		mu.Lock()
		defer mu.Unlock()
		if m, ok := stores[t]; ok {
			return m.Reopen()
		}
		m := storetest.NewMem()
		stores[t] = m
		return m
	})
}

func TestMemApprovals(t *testing.T) {
	storetest.RunApprovals(t, func(t *testing.T) approval.ApprovalStore {
		m := storetest.NewMem()
		t.Cleanup(func() { m.Close() })
		return m
	})
}

func TestMemACS(t *testing.T) {
	storetest.RunACS(t, func(t *testing.T) acsstate.Store {
		m := storetest.NewMem()
		t.Cleanup(func() { m.Close() })
		return m
	})
}
