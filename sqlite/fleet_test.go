package sqlite

import (
	"context"
	"testing"

	"github.com/wardenhq/warden/storetest"
)

func TestFleet(t *testing.T) {
	dirs := map[storetest.FleetStore]string{}
	storetest.RunFleet(t, func(t *testing.T) storetest.FleetStore {
		dir := t.TempDir()
		s := open(t, dir, Options{})
		dirs[s] = dir
		return s
	}, func(t *testing.T, s storetest.FleetStore) storetest.FleetStore {
		if err := s.(*Store).Close(); err != nil {
			t.Fatal(err)
		}
		return open(t, dirs[s], Options{})
	})
}

func TestReady(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	if err := s.Ready(context.Background()); err != nil {
		t.Fatalf("Ready of an open store: %v", err)
	}
	s.Close()
	if err := s.Ready(context.Background()); err == nil {
		t.Fatal("Ready of a closed store: nil, want an error")
	}
}
