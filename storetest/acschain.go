package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/acsstate"
)

// This file holds RunACS's tests of the replay window, the chain and
// concurrency (acs.go has the suite and its helpers).

func testACSPutKeepsChain(t *testing.T, open func(*testing.T) acsstate.Store) {
	s := open(t)
	// A new session starts with an empty chain, whatever Head and Entries say.
	fresh := acsSession("s1")
	fresh.Head, fresh.Entries = "bogus", 7
	putSession(t, s, fresh)
	want := *acsSession("s1")
	checkFields(t, "new", *getSession(t, s, "s1"), want)

	chain := appendEntries(t, s, "s1", "", 1, 2)
	again := &acsstate.Session{ID: "s1", AgentID: "agent-2", Tenant: "beta", KeyID: "key-2", Version: "1.1",
		Methods: []string{"steps/agentResponse"}, Hello: base.Add(time.Hour), LastSeen: base.Add(2 * time.Hour),
		Head: "bogus", Entries: 99}
	putSession(t, s, again)
	want = *again
	want.Head, want.Entries = chain[1].EntryHash, 2
	checkFields(t, "replaced", *getSession(t, s, "s1"), want)
	checkEntries(t, "the chain after Put", entries(t, s, "s1", 0, 0), chain)
	// The chain goes on from the kept head.
	appendEntries(t, s, "s1", chain[1].EntryHash, 3, 3)

	// Put never reopens an ended session; it may end one.
	if err := s.EndACSSession(context.Background(), "s1", base.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	putSession(t, s, again)
	if got := getSession(t, s, "s1"); !got.Ended || got.Entries != 3 {
		t.Errorf("after End and Put: Ended %v, Entries %d; want true, 3", got.Ended, got.Entries)
	}
	ended := acsSession("s2")
	ended.Ended = true
	putSession(t, s, ended)
	if got := getSession(t, s, "s2"); !got.Ended {
		t.Errorf("Put with Ended: not ended")
	}
}

func testACSRemember(t *testing.T, open func(*testing.T) acsstate.Store) {
	s := open(t)
	const w = 10 * time.Minute
	first := base.Add(123 * time.Microsecond)
	for _, tt := range []struct {
		name, session, key string
		at                 time.Time
		window             time.Duration
		want               error
	}{
		{"first", "s1", "k1", first, w, nil},
		{"again at once", "s1", "k1", first, w, acsstate.ErrReplay},
		{"within the window", "s1", "k1", first.Add(5 * time.Minute), w, acsstate.ErrReplay},
		{"at exactly first+window", "s1", "k1", first.Add(w), w, acsstate.ErrReplay},
		{"before first", "s1", "k1", first.Add(-time.Minute), w, acsstate.ErrReplay},
		{"another session", "s2", "k1", first, w, nil},
		{"another key", "s1", "k2", first.Add(time.Second), w, nil},
		{"a nonce", "s1", "nonce:k1", first, w, nil},
		{"the nonce again", "s1", "nonce:k1", first.Add(time.Second), w, acsstate.ErrReplay},
		{"after the window", "s1", "k1", first.Add(w + time.Microsecond), w, nil},
		{"recorded afresh", "s1", "k1", first.Add(w + time.Minute), w, acsstate.ErrReplay},
		{"a shorter window", "s1", "k2", first.Add(2 * time.Second), time.Second, acsstate.ErrReplay},
		{"after the shorter window", "s1", "k2", first.Add(2*time.Second + time.Microsecond), time.Second, nil},
		{"the other session's, long after", "s2", "k1", first.Add(time.Hour), w, nil},
		{"and again", "s2", "k1", first.Add(time.Hour), w, acsstate.ErrReplay},
	} {
		err := s.RememberRequest(context.Background(), tt.session, tt.key, tt.at, tt.window)
		if (tt.want == nil) != (err == nil) || !errors.Is(err, tt.want) {
			t.Errorf("%s: RememberRequest(%s, %s, first%+v, %v) = %v, want %v",
				tt.name, tt.session, tt.key, tt.at.Sub(first), tt.window, err, tt.want)
		}
	}
}

func testACSAppend(t *testing.T, open func(*testing.T) acsstate.Store) {
	s := open(t)
	ctx := context.Background()
	putSession(t, s, acsSession("s1"), acsSession("s2"))
	chain := appendEntries(t, s, "s1", "", 1, 1)
	check := func(what string, head string, n int64) {
		t.Helper()
		if got := getSession(t, s, "s1"); got.Head != head || got.Entries != n {
			t.Errorf("%s: Head %q, Entries %d; want %q, %d", what, got.Head, got.Entries, head, n)
		}
		if got := entries(t, s, "s1", 0, 0); len(got) != int(n) {
			t.Errorf("%s: %d entries stored, want %d", what, len(got), n)
		}
	}
	check("after the first", chain[0].EntryHash, 1)
	for _, prev := range []string{"", "bogus", acsHash("entry", "s2", 1)} {
		if err := s.AppendACSEntry(ctx, "s1", prev, acsEntry("s1", 2, prev)); !errors.Is(err, acsstate.ErrChainMoved) {
			t.Errorf("AppendACSEntry(prev %q) = %v, want ErrChainMoved", prev, err)
		}
		check(fmt.Sprintf("after prev %q", prev), chain[0].EntryHash, 1)
	}
	chain = append(chain, appendEntries(t, s, "s1", chain[0].EntryHash, 2, 2)...)
	check("after the second", chain[1].EntryHash, 2)
	if err := s.AppendACSEntry(ctx, "s1", chain[0].EntryHash, acsEntry("s1", 3, chain[0].EntryHash)); !errors.Is(err, acsstate.ErrChainMoved) {
		t.Errorf("AppendACSEntry(a stale head) = %v, want ErrChainMoved", err)
	}
	// Chains are per session.
	if err := s.AppendACSEntry(ctx, "s2", chain[1].EntryHash, acsEntry("s2", 1, "")); !errors.Is(err, acsstate.ErrChainMoved) {
		t.Errorf("AppendACSEntry(s2, s1's head) = %v, want ErrChainMoved", err)
	}
	other := appendEntries(t, s, "s2", "", 1, 1)
	check("after s2's", chain[1].EntryHash, 2)
	checkEntries(t, "s1", entries(t, s, "s1", 0, 0), chain)
	checkEntries(t, "s2", entries(t, s, "s2", 0, 0), other)
}

func testACSAppendInvalid(t *testing.T, open func(*testing.T) acsstate.Store) {
	s := open(t)
	putSession(t, s, acsSession("s1"))
	noHash := acsEntry("s1", 1, "")
	noHash.EntryHash = ""
	for _, e := range []*acsstate.Entry{nil, noHash} {
		if err := s.AppendACSEntry(context.Background(), "s1", "", e); err == nil {
			t.Errorf("AppendACSEntry(%+v) = nil, want an error", e)
		}
	}
	if got := getSession(t, s, "s1"); got.Head != "" || got.Entries != 0 {
		t.Errorf("after refused appends: Head %q, Entries %d", got.Head, got.Entries)
	}
}

func testACSEntries(t *testing.T, open func(*testing.T) acsstate.Store) {
	s := open(t)
	putSession(t, s, acsSession("s1"), acsSession("s2"))
	var chain []acsstate.Entry
	prev, prev2 := "", ""
	for n := 1; n <= 25; n++ { // s2's entries between s1's
		chain = append(chain, appendEntries(t, s, "s1", prev, n, n)...)
		prev = chain[n-1].EntryHash
		if n%5 == 0 {
			prev2 = appendEntries(t, s, "s2", prev2, n, n)[0].EntryHash
		}
	}
	for _, tt := range []struct {
		after      int64
		limit      int
		start, end int
	}{
		{0, 0, 0, 25}, {0, -1, 0, 25}, {0, 10, 0, 10}, {10, 10, 10, 20}, {20, 10, 20, 25},
		{24, 0, 24, 25}, {25, 10, 25, 25}, {30, 5, 25, 25}, {3, 1, 3, 4}, {0, 100, 0, 25},
	} {
		what := fmt.Sprintf("ACSEntries(after %d, limit %d)", tt.after, tt.limit)
		checkEntries(t, what, entries(t, s, "s1", tt.after, tt.limit), chain[tt.start:tt.end])
	}
	for _, size := range []int{1, 2, 7, 25} {
		var got []acsstate.Entry
		for after := int64(0); ; {
			p := entries(t, s, "s1", after, size)
			got, after = append(got, p...), after+int64(len(p))
			if len(p) < size {
				break
			}
		}
		checkEntries(t, fmt.Sprintf("in pages of %d", size), got, chain)
	}
	if got := entries(t, s, "s2", 0, 0); len(got) != 5 {
		t.Errorf("s2 has %d entries, want 5", len(got))
	}
}

func testACSEntriesDefaultLimit(t *testing.T, open func(*testing.T) acsstate.Store) {
	s := open(t)
	putSession(t, s, acsSession("s1"))
	chain := appendEntries(t, s, "s1", "", 1, 1001)
	for _, limit := range []int{0, -1} {
		got := entries(t, s, "s1", 0, limit)
		if len(got) != 1000 || got[999].EntryHash != chain[999].EntryHash {
			t.Errorf("ACSEntries(limit %d): %d entries, want the first 1000", limit, len(got))
		}
	}
	checkEntries(t, "the last", entries(t, s, "s1", 1000, 0), chain[1000:])
}

func testACSEnd(t *testing.T, open func(*testing.T) acsstate.Store) {
	s := open(t)
	ctx := context.Background()
	putSession(t, s, acsSession("s1"), acsSession("s2"))
	chain := appendEntries(t, s, "s1", "", 1, 2)
	for range 2 { // ending twice is no error
		if err := s.EndACSSession(ctx, "s1", base.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		want := *acsSession("s1")
		want.Head, want.Entries, want.Ended = chain[1].EntryHash, 2, true
		checkFields(t, "ended", *getSession(t, s, "s1"), want)
	}
	if got := getSession(t, s, "s2"); got.Ended {
		t.Errorf("ending s1 ended s2")
	}
	checkEntries(t, "the chain of an ended session", entries(t, s, "s1", 0, 0), chain)
}

// testACSAppendRace: 16 goroutines append on one head, round after round;
// then 16 goroutines chase the head until each has appended 5 entries.
func testACSAppendRace(t *testing.T, open func(*testing.T) acsstate.Store) {
	s := open(t)
	ctx := context.Background()
	putSession(t, s, acsSession("s1"))
	prev := ""
	for round := range 4 {
		var mu sync.Mutex
		var wins []*acsstate.Entry
		race(func(i int) {
			e := acsEntry("s1", 100*round+i, prev)
			err := s.AppendACSEntry(ctx, "s1", prev, e)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins = append(wins, e)
			case !errors.Is(err, acsstate.ErrChainMoved):
				t.Errorf("round %d, appender %d: %v", round, i, err)
			}
		})
		if len(wins) != 1 {
			t.Fatalf("round %d: %d appends succeeded, want exactly 1", round, len(wins))
		}
		prev = wins[0].EntryHash
	}
	race(func(i int) {
		for n := 0; n < 5; {
			cur, err := s.ACSSession(ctx, "s1")
			if err != nil {
				t.Error(err)
				return
			}
			err = s.AppendACSEntry(ctx, "s1", cur.Head, acsEntry("s1", 1000+10*i+n, cur.Head))
			switch {
			case err == nil:
				n++
			case !errors.Is(err, acsstate.ErrChainMoved):
				t.Errorf("chaser %d: %v", i, err)
				return
			}
		}
	})
	got := getSession(t, s, "s1")
	chain := entries(t, s, "s1", 0, 0)
	if want := 4 + 16*5; got.Entries != int64(want) || len(chain) != want {
		t.Fatalf("Entries %d, %d entries stored; want %d", got.Entries, len(chain), want)
	}
	prev = ""
	for i, e := range chain {
		if e.PreviousHash != prev {
			t.Fatalf("entry %d follows %q, want the previous entry's %q", i, e.PreviousHash, prev)
		}
		prev = e.EntryHash
	}
	if got.Head != prev {
		t.Errorf("Head %q, want the last entry's %q", got.Head, prev)
	}
}

func testACSRememberRace(t *testing.T, open func(*testing.T) acsstate.Store) {
	s := open(t)
	var mu sync.Mutex
	ok := 0
	race(func(i int) {
		at := base.Add(time.Duration(i) * time.Millisecond)
		err := s.RememberRequest(context.Background(), "s1", "req-1", at, 10*time.Minute)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, acsstate.ErrReplay):
			t.Errorf("goroutine %d: %v", i, err)
		}
	})
	if ok != 1 {
		t.Errorf("%d RememberRequests of one key succeeded, want exactly 1", ok)
	}
	race(func(i int) {
		if err := s.RememberRequest(context.Background(), "s1", fmt.Sprint("key-", i), base, time.Minute); err != nil {
			t.Errorf("distinct key %d: %v", i, err)
		}
	})
}
