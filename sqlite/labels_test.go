package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/wardenhq/warden/labels"

	"github.com/wardenhq/warden/storetest"
)

func TestLabels(t *testing.T) {
	dirs := map[labels.Store]string{}
	storetest.RunLabels(t, func(t *testing.T) labels.Store {
		dir := t.TempDir()
		s := open(t, dir, Options{})
		dirs[s] = dir
		return s
	}, func(t *testing.T, s labels.Store) labels.Store {
		if err := s.(*Store).Close(); err != nil {
			t.Fatal(err)
		}
		return open(t, dirs[s], Options{})
	})
}

// Retention deletes the labels of sessions whose records are all pruned,
// once the labels are older than the cutoff; a session still recording
// keeps its labels however old.
func TestPruneLabels(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir(), Options{})
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	old, live := testRecord("r-old", t0), testRecord("r-live", t0)
	old.SessionID, live.SessionID = "gone", "active"
	recent := testRecord("r-recent", t0.Add(10*time.Hour))
	recent.SessionID = "active"
	recordAll(t, s, old, live, recent)
	for _, sess := range []string{"gone", "active"} {
		if _, err := s.AddSessionLabels(ctx, "acme", sess, []string{"read_private"}, t0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.AddSessionLabels(ctx, "acme", "fresh", []string{"read_private"}, t0.Add(11*time.Hour)); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(12 * time.Hour)
	st, err := s.Prune(ctx, Retention{MaxAge: 5 * time.Hour, Now: func() time.Time { return now }})
	if err != nil || st.Deleted != 2 || st.Labels != 1 {
		t.Fatalf("%+v %v; want 2 records and 1 label deleted", st, err)
	}
	for sess, want := range map[string]bool{"gone": false, "active": true, "fresh": true} {
		ls, err := s.SessionLabels(ctx, "acme", sess)
		if err != nil || (len(ls) == 1) != want {
			t.Errorf("session %s: labels %q, %v; want kept %v", sess, ls, err, want)
		}
	}
}
