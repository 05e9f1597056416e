package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/approval"
)

// next reads one id from ch within d.
func next(t *testing.T, ch <-chan string, d time.Duration, what string) string {
	t.Helper()
	select {
	case id, ok := <-ch:
		if !ok {
			t.Fatalf("%s: the feed closed", what)
		}
		return id
	case <-time.After(d):
		t.Fatalf("%s: nothing within %v", what, d)
	}
	return ""
}

// TestApprovalChanges: a store's feed carries the ids of approvals other
// stores change, not its own; it survives its connection being killed
// (it says "" once listening again, and carries the next change); it closes
// when its context ends, and the listener stops with its last subscriber.
func TestApprovalChanges(t *testing.T) {
	a, b := fleet(t)
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := a.ApprovalChanges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if id := next(t, ch, 5*time.Second, "connecting"); id != "" {
		t.Fatalf("first id %q, want the resync marker", id)
	}
	now := time.Now().UTC()
	if err := a.CreateApproval(ctx, &approval.Approval{ID: "mine", Created: now, Expires: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateApproval(ctx, &approval.Approval{ID: "theirs", Created: now, Expires: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if id := next(t, ch, time.Second, "after B created"); id != "theirs" {
		t.Fatalf("got %q, want theirs (a store's own changes are not fed back)", id)
	}

	// Kill the listening connection: the listener reconnects by itself.
	var channel string
	if err := a.pool.QueryRow(ctx, `SELECT `+channelSQL).Scan(&channel); err != nil {
		t.Fatal(err)
	}
	tag, err := a.pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE pid <> pg_backend_pid() AND query = $1`, `LISTEN "`+channel+`"`)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("terminating the listener: %v, %d backends", err, tag.RowsAffected())
	}
	start := time.Now()
	if id := next(t, ch, 5*time.Second, "reconnecting"); id != "" {
		t.Fatalf("after reconnecting %q, want the resync marker", id)
	}
	t.Logf("listening again %v after its connection was killed", time.Since(start))
	if _, err := b.DecideApproval(ctx, "mine", approval.ApprovalApproved, "bob", "", now); err != nil {
		t.Fatal(err)
	}
	if id := next(t, ch, time.Second, "after reconnecting"); id != "mine" {
		t.Fatalf("got %q, want mine", id)
	}

	cancel()
	for range ch { // closed once ctx ends
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		listenMu.Lock()
		_, live := listeners[a]
		listenMu.Unlock()
		if !live {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the listener outlived its last subscriber")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestApprovalChangesLag: a subscriber that does not read has its channel
// closed once it is feedBuffer ids behind; the others go on.
func TestApprovalChangesLag(t *testing.T) {
	a, b := fleet(t)
	ctx := context.Background()
	slow, err := a.ApprovalChanges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fast, err := a.ApprovalChanges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got atomic.Int32
	go func() {
		for id := range fast {
			if strings.HasPrefix(id, "lag-") {
				got.Add(1)
			}
		}
	}()
	time.Sleep(300 * time.Millisecond) // listening
	now := time.Now().UTC()
	n := feedBuffer + 10
	for i := range n {
		if err := b.CreateApproval(ctx, &approval.Approval{ID: fmt.Sprintf("lag-%d", i), Created: now, Expires: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for got.Load() < int32(n) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got.Load() != int32(n) {
		t.Fatalf("the reading subscriber got %d of %d", got.Load(), n)
	}
	count := 0
	for range slow {
		count++
	}
	if count > feedBuffer {
		t.Fatalf("the slow subscriber got %d ids, more than its buffer %d", count, feedBuffer)
	}
}

func TestParseNote(t *testing.T) {
	for _, tt := range []struct {
		payload, id string
		ok          bool
	}{
		{"other ap-1", "ap-1", true},
		{"other id with spaces", "id with spaces", true},
		{"me ap-1", "", false},
		{"other ", "", false},
		{" ap-1", "", false},
		{"no-space", "", false},
		{"", "", false},
	} {
		id, ok := parseNote(tt.payload, "me")
		if id != tt.id || ok != tt.ok {
			t.Errorf("parseNote(%q) = %q, %v; want %q, %v", tt.payload, id, ok, tt.id, tt.ok)
		}
	}
}

func FuzzParseNote(f *testing.F) {
	for _, s := range []string{"o ap", "me x", "", " ", "a b c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, payload string) {
		id, ok := parseNote(payload, "me")
		if ok && (id == "" || !strings.HasSuffix(payload, " "+id) || strings.HasPrefix(payload, "me ")) {
			t.Fatalf("parseNote(%q) = %q", payload, id)
		}
		if !ok && id != "" {
			t.Fatalf("parseNote(%q) refused but gave %q", payload, id)
		}
	})
}
