package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/wardenhq/warden/acsstate"
)

// RunACS runs the acsstate.Store contract tests as subtests of t.
// open must return a new, empty store for each (sub)test t it is given, and
// should register a t.Cleanup that closes it.
//
// The contract checked, beyond the acsstate.Store documentation:
//
//   - every ACSSession and ACSEntry field round-trips; times come back in
//     UTC, truncated to the microsecond, the zero time as zero; Methods
//     comes back with the same elements (nil and empty alike); the store
//     keeps copies;
//   - PutACSSession refuses nil and a missing id; it never writes Head and
//     Entries (a new session starts with "" and 0, a replaced one keeps its
//     chain), and it never clears Ended (a stale Put racing EndACSSession
//     cannot reopen the session);
//   - ACSSession, AppendACSEntry, ACSEntries and EndACSSession of an
//     unknown session are acsstate.ErrNoSession;
//   - RememberRequest: a key is a replay in its own session only, while the
//     time it was recorded is at or after at-window (at exactly
//     first+window it still is, a microsecond later it is not, and the key
//     is recorded afresh); a replay records nothing; the session need not
//     exist;
//   - AppendACSEntry refuses a nil entry and one without EntryHash; when
//     prev is not the head it is acsstate.ErrChainMoved and writes nothing;
//     otherwise the entry is the chain's next and the session's Head and
//     Entries follow;
//   - ACSEntries: oldest first, skipping the first after, at most limit
//     (limit <= 0 is 1000); never nil;
//   - EndACSSession sets Ended (ending twice is no error), keeping the rest;
//   - 16 goroutines appending on one head: exactly one wins each round and
//     the chain stays linked; 16 remembering one key: exactly one succeeds.
func RunACS(t *testing.T, open func(t *testing.T) acsstate.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(*testing.T, func(*testing.T) acsstate.Store)
	}{
		{"RoundTrip", testACSRoundTrip},
		{"PutKeepsChain", testACSPutKeepsChain},
		{"PutInvalid", testACSPutInvalid},
		{"NoSession", testACSNoSession},
		{"Remember", testACSRemember},
		{"Append", testACSAppend},
		{"AppendInvalid", testACSAppendInvalid},
		{"Entries", testACSEntries},
		{"EntriesDefaultLimit", testACSEntriesDefaultLimit},
		{"End", testACSEnd},
		{"AppendRace", testACSAppendRace},
		{"RememberRace", testACSRememberRace},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open) })
	}
}

// acsSession returns a session that shook hands at base.
func acsSession(id string) *acsstate.Session {
	return &acsstate.Session{
		ID: id, AgentID: "agent-" + id, Tenant: "acme", KeyID: "key-1", Version: "1.0",
		Methods: []string{"steps/toolCallRequest", "steps/sessionEnd"},
		Hello:   base, LastSeen: base.Add(time.Second),
	}
}

// acsHash is a made-up entry hash: hex, 64 digits, distinct per argument.
func acsHash(parts ...any) string {
	h := sha256.Sum256([]byte(fmt.Sprint(parts...)))
	return hex.EncodeToString(h[:])
}

// acsEntry returns the entry n (from 1) of session's chain, after prev.
func acsEntry(session string, n int, prev string) *acsstate.Entry {
	return &acsstate.Entry{
		EntryID: fmt.Sprintf("%s-entry-%d", session, n), StepID: fmt.Sprintf("req-%d", n),
		StepType: "steps/toolCallRequest", RequestHash: acsHash("request", session, n),
		Timestamp:    base.Add(time.Duration(n)*time.Second + 1234567),
		PreviousHash: prev, EntryHash: acsHash("entry", session, n),
		Decision: []string{"allow", "deny", "ask"}[n%3], RecordID: fmt.Sprintf("rec-%s-%d", session, n),
	}
}

// checkFields compares every field of got and want, two structs of one
// type: times with Equal and in UTC (want's truncated to the microsecond),
// string slices by their elements (nil as empty), the rest with ==.
func checkFields(t *testing.T, what string, got, want any) {
	t.Helper()
	gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range gv.NumField() {
		name := gv.Type().Field(i).Name
		switch g := gv.Field(i).Interface().(type) {
		case time.Time:
			w := usTime(wv.Field(i).Interface().(time.Time))
			if !g.Equal(w) || g.IsZero() != w.IsZero() {
				t.Errorf("%s: %s = %v, want %v", what, name, g, w)
			}
			if !g.IsZero() && g.Location() != time.UTC {
				t.Errorf("%s: %s location = %v, want UTC", what, name, g.Location())
			}
		case []string:
			if w := wv.Field(i).Interface().([]string); !slices.Equal(g, w) {
				t.Errorf("%s: %s = %q, want %q", what, name, g, w)
			}
		default:
			if w := wv.Field(i).Interface(); g != w {
				t.Errorf("%s: %s = %#v, want %#v", what, name, g, w)
			}
		}
	}
}

func putSession(t *testing.T, s acsstate.Store, ss ...*acsstate.Session) {
	t.Helper()
	for _, x := range ss {
		if err := s.PutACSSession(context.Background(), x); err != nil {
			t.Fatalf("PutACSSession(%s): %v", x.ID, err)
		}
	}
}

func getSession(t *testing.T, s acsstate.Store, id string) *acsstate.Session {
	t.Helper()
	got, err := s.ACSSession(context.Background(), id)
	if err != nil || got == nil {
		t.Fatalf("ACSSession(%s) = %v, %v", id, got, err)
	}
	return got
}

// appendEntries appends entries from..to (inclusive) of session's chain,
// each after the one before (entry from after prev), and returns them.
func appendEntries(t *testing.T, s acsstate.Store, session, prev string, from, to int) []acsstate.Entry {
	t.Helper()
	var out []acsstate.Entry
	for n := from; n <= to; n++ {
		e := acsEntry(session, n, prev)
		if err := s.AppendACSEntry(context.Background(), session, prev, e); err != nil {
			t.Fatalf("AppendACSEntry(%s, entry %d): %v", session, n, err)
		}
		out, prev = append(out, *e), e.EntryHash
	}
	return out
}

func entries(t *testing.T, s acsstate.Store, session string, after int64, limit int) []acsstate.Entry {
	t.Helper()
	got, err := s.ACSEntries(context.Background(), session, after, limit)
	if err != nil {
		t.Fatalf("ACSEntries(%s, %d, %d): %v", session, after, limit, err)
	}
	if got == nil {
		t.Errorf("ACSEntries(%s, %d, %d) = nil, want a non-nil slice", session, after, limit)
	}
	return got
}

// checkEntries compares got with want entry by entry.
func checkEntries(t *testing.T, what string, got, want []acsstate.Entry) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d entries, want %d", what, len(got), len(want))
		return
	}
	for i := range got {
		checkFields(t, fmt.Sprintf("%s: entry %d", what, i), got[i], want[i])
	}
}

func testACSRoundTrip(t *testing.T, open func(*testing.T) acsstate.Store) {
	s := open(t)
	ctx := context.Background()
	cet := time.FixedZone("CET", 3600)
	const agent = "agent ünïcødé ✓ \"quoted\"\n\t<>&'"
	want := &acsstate.Session{
		ID: "0193a4f2-7c1e-7d3a-9b2f-2f6c1e0a9d41", AgentID: agent, Tenant: "acme", KeyID: "acme-2026",
		Version: "0.9.1", Methods: []string{"steps/toolCallRequest", "protocols/MCP/tools/call", "steps/sessionEnd"},
		Profiles: []string{"acs-core", "acs-provenance"},
		Hello:    time.Date(2026, 11, 21, 11, 0, 0, 123456789, cet),
		LastSeen: time.Date(2026, 11, 21, 11, 5, 0, 999999999, cet),
	}
	putSession(t, s, want)
	checkFields(t, "stored", *getSession(t, s, want.ID), *want)

	// The store keeps copies.
	want.Methods[0], want.AgentID = "changed", "changed"
	got := getSession(t, s, want.ID)
	got.Methods[1] = "changed too"
	want.Methods[0], want.AgentID = "steps/toolCallRequest", agent
	checkFields(t, "after changing copies", *getSession(t, s, want.ID), *want)

	// Through its life every field gets a value.
	e := acsEntry(want.ID, 1, "")
	e.Timestamp = time.Date(2026, 11, 21, 11, 1, 0, 555555555, cet)
	if err := s.AppendACSEntry(ctx, want.ID, "", e); err != nil {
		t.Fatal(err)
	}
	chain := append([]acsstate.Entry{*e}, appendEntries(t, s, want.ID, e.EntryHash, 2, 3)...)
	if err := s.EndACSSession(ctx, want.ID, base.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	want.Head, want.Entries, want.Ended = chain[2].EntryHash, 3, true
	final := getSession(t, s, want.ID)
	checkFields(t, "final", *final, *want)
	for _, v := range []reflect.Value{reflect.ValueOf(*final), reflect.ValueOf(chain[1])} {
		for i := range v.NumField() {
			if v.Field(i).IsZero() {
				t.Errorf("%s.%s is still zero: the round trip does not cover it", v.Type().Name(), v.Type().Field(i).Name)
			}
		}
	}
	checkEntries(t, "chain", entries(t, s, want.ID, 0, 0), chain)

	// The least session: an id, nothing else.
	putSession(t, s, &acsstate.Session{ID: "least"})
	checkFields(t, "least", *getSession(t, s, "least"), acsstate.Session{ID: "least"})
	if err := s.AppendACSEntry(ctx, "least", "", &acsstate.Entry{EntryHash: "h"}); err != nil {
		t.Fatal(err)
	}
	checkEntries(t, "least entry", entries(t, s, "least", 0, 0), []acsstate.Entry{{EntryHash: "h"}})
}

func testACSPutInvalid(t *testing.T, open func(*testing.T) acsstate.Store) {
	s := open(t)
	for _, x := range []*acsstate.Session{nil, {AgentID: "no id"}} {
		if err := s.PutACSSession(context.Background(), x); err == nil {
			t.Errorf("PutACSSession(%+v) = nil, want an error", x)
		}
	}
}

func testACSNoSession(t *testing.T, open func(*testing.T) acsstate.Store) {
	s := open(t)
	ctx := context.Background()
	putSession(t, s, acsSession("s1"))
	if got, err := s.ACSSession(ctx, "nope"); !errors.Is(err, acsstate.ErrNoSession) || got != nil {
		t.Errorf("ACSSession(nope) = %+v, %v; want ErrNoSession", got, err)
	}
	if err := s.AppendACSEntry(ctx, "nope", "", acsEntry("nope", 1, "")); !errors.Is(err, acsstate.ErrNoSession) {
		t.Errorf("AppendACSEntry(nope) = %v; want ErrNoSession", err)
	}
	if got, err := s.ACSEntries(ctx, "nope", 0, 0); !errors.Is(err, acsstate.ErrNoSession) || len(got) != 0 {
		t.Errorf("ACSEntries(nope) = %d, %v; want ErrNoSession", len(got), err)
	}
	if err := s.EndACSSession(ctx, "nope", base); !errors.Is(err, acsstate.ErrNoSession) {
		t.Errorf("EndACSSession(nope) = %v; want ErrNoSession", err)
	}
	if got, err := s.ACSSession(ctx, "nope"); !errors.Is(err, acsstate.ErrNoSession) {
		t.Errorf("after the failed calls, ACSSession(nope) = %+v, %v; want ErrNoSession", got, err)
	}
	if got := entries(t, s, "s1", 0, 0); len(got) != 0 {
		t.Errorf("a new session has %d entries", len(got))
	}
}
