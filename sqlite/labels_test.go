package sqlite

import (
	"testing"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/storetest"
)

func TestLabels(t *testing.T) {
	dirs := map[warden.LabelStore]string{}
	storetest.RunLabels(t, func(t *testing.T) warden.LabelStore {
		dir := t.TempDir()
		s := open(t, dir, Options{})
		dirs[s] = dir
		return s
	}, func(t *testing.T, s warden.LabelStore) warden.LabelStore {
		if err := s.(*Store).Close(); err != nil {
			t.Fatal(err)
		}
		return open(t, dirs[s], Options{})
	})
}
