package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/labels"
)

// RunLabels runs the labels.Store contract tests as subtests of t.
// open must return a new, empty store for each (sub)test t it is given, and
// should register a t.Cleanup that closes it. reopen, when not nil, closes
// the store it is given and opens the same data again (a restart).
//
// The contract checked, beyond the labels.Store documentation:
//
//   - a session without labels has none (nil or empty);
//   - AddSessionLabels returns the union, sorted, each label once; adding
//     labels it has changes nothing;
//   - sessions are told apart by tenant and id: the same id in two tenants
//     (and "" as a tenant) has two label sets;
//   - an invalid label, and more than labels.MaxPerSession in all
//     (labels.ErrTooMany), add nothing, also of the valid ones;
//   - the store keeps copies: changing a returned slice changes nothing;
//   - 16 goroutines adding distinct labels to one session: all are kept;
//   - with reopen, labels survive closing and reopening the store.
func RunLabels(t *testing.T, open func(t *testing.T) labels.Store, reopen func(t *testing.T, s labels.Store) labels.Store) {
	t.Helper()
	ctx := context.Background()
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	labelsOf := func(t *testing.T, s labels.Store, tenant, session string) []string {
		t.Helper()
		ls, err := s.SessionLabels(ctx, tenant, session)
		if err != nil {
			t.Fatalf("SessionLabels(%q, %q): %v", tenant, session, err)
		}
		if len(ls) == 0 {
			return nil
		}
		return ls
	}
	add := func(t *testing.T, s labels.Store, tenant, session string, ls ...string) []string {
		t.Helper()
		got, err := s.AddSessionLabels(ctx, tenant, session, ls, at)
		if err != nil {
			t.Fatalf("AddSessionLabels(%q, %q, %q): %v", tenant, session, ls, err)
		}
		return got
	}
	want := func(t *testing.T, what string, got []string, w ...string) {
		t.Helper()
		if len(w) == 0 {
			w = nil
		}
		if len(got) == 0 {
			got = nil
		}
		if !reflect.DeepEqual(got, w) {
			t.Fatalf("%s = %q, want %q", what, got, w)
		}
	}

	t.Run("Empty", func(t *testing.T) {
		s := open(t)
		want(t, "labels of a new session", labelsOf(t, s, "", "s1"))
	})
	t.Run("Union", func(t *testing.T) {
		s := open(t)
		want(t, "first add", add(t, s, "", "s1", "untrusted_input", "read_private"), "read_private", "untrusted_input")
		want(t, "second add", add(t, s, "", "s1", "read_private", "external_send", "external_send"),
			"external_send", "read_private", "untrusted_input")
		want(t, "read back", labelsOf(t, s, "", "s1"), "external_send", "read_private", "untrusted_input")
		want(t, "adding none", add(t, s, "", "s1"), "external_send", "read_private", "untrusted_input")
	})
	t.Run("Isolation", func(t *testing.T) {
		s := open(t)
		add(t, s, "acme", "s1", "read_private")
		add(t, s, "globex", "s1", "untrusted_input")
		add(t, s, "", "s1", "external_send")
		want(t, "acme", labelsOf(t, s, "acme", "s1"), "read_private")
		want(t, "globex", labelsOf(t, s, "globex", "s1"), "untrusted_input")
		want(t, "no tenant", labelsOf(t, s, "", "s1"), "external_send")
		want(t, "another session", labelsOf(t, s, "acme", "s2"))
	})
	t.Run("Invalid", func(t *testing.T) {
		s := open(t)
		for _, bad := range []string{"", "Upper", "1digit", "with space", string(make([]byte, labels.MaxLen+1))} {
			if _, err := s.AddSessionLabels(ctx, "", "s1", []string{"read_private", bad}, at); err == nil {
				t.Errorf("AddSessionLabels(%q) succeeded", bad)
			}
		}
		want(t, "after invalid adds", labelsOf(t, s, "", "s1"))
		if _, err := s.AddSessionLabels(ctx, "", "", []string{"read_private"}, at); err == nil {
			t.Error("AddSessionLabels without a session id succeeded")
		}
	})
	t.Run("TooMany", func(t *testing.T) {
		s := open(t)
		var ls []string
		for i := range labels.MaxPerSession {
			ls = append(ls, fmt.Sprintf("l%03d", i))
		}
		add(t, s, "", "s1", ls...)
		_, err := s.AddSessionLabels(ctx, "", "s1", []string{"one_more", "l000"}, at)
		if !errors.Is(err, labels.ErrTooMany) {
			t.Fatalf("adding label %d: %v, want ErrTooManyLabels", labels.MaxPerSession+1, err)
		}
		if got := labelsOf(t, s, "", "s1"); len(got) != labels.MaxPerSession {
			t.Fatalf("%d labels after the refused add, want %d", len(got), labels.MaxPerSession)
		}
	})
	t.Run("Copies", func(t *testing.T) {
		s := open(t)
		got := add(t, s, "", "s1", "read_private")
		got[0] = "changed"
		ls := labelsOf(t, s, "", "s1")
		ls[0] = "changed"
		want(t, "after changing copies", labelsOf(t, s, "", "s1"), "read_private")
	})
	t.Run("Concurrent", func(t *testing.T) {
		s := open(t)
		var wg sync.WaitGroup
		var w []string
		for i := range 16 {
			l := fmt.Sprintf("l%02d", i)
			w = append(w, l)
			wg.Go(func() {
				if _, err := s.AddSessionLabels(ctx, "t", "s1", []string{l}, at); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		want(t, "after concurrent adds", labelsOf(t, s, "t", "s1"), w...)
	})
	if reopen != nil {
		t.Run("Reopen", func(t *testing.T) {
			s := open(t)
			add(t, s, "acme", "s1", "read_private", "untrusted_input")
			s = reopen(t, s)
			want(t, "after reopening", labelsOf(t, s, "acme", "s1"), "read_private", "untrusted_input")
		})
	}
}
