package postgres

import (
	"testing"

	"github.com/wardenhq/warden/storetest"
)

func TestFleetRegistryContract(t *testing.T) {
	testBaseURL(t)
	urls := map[storetest.FleetStore]string{}
	storetest.RunFleet(t, func(t *testing.T) storetest.FleetStore {
		u := testSchemaURL(t)
		s := openTest(t, u, Options{})
		urls[s] = u
		return s
	}, func(t *testing.T, s storetest.FleetStore) storetest.FleetStore {
		if err := s.(*Store).Close(); err != nil {
			t.Fatal(err)
		}
		return openTest(t, urls[s], Options{})
	})
}
