package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/wardenhq/warden/acsstate"
)

// Mem is also an in-memory acsstate.Store with the semantics of the
// SQLite store (TestMemACS runs RunACS against it): times are kept in UTC to
// the microsecond, every change is made under one mutex (the append a
// compare-and-set of the head), and the sessions outlive Close (Reopen sees
// them), while the changing methods fail after Close.

var _ acsstate.Store = (*Mem)(nil)

// defaultACSEntries is ACSEntries' limit when it is given none.
const defaultACSEntries = 1000

// memACS are a Mem's ACS sessions and replay windows, under memData.mu.
type memACS struct {
	sessions map[string]*memACSSession
	replays  map[string]*memReplays // by session id
}

// memACSSession is one session: its state (Head and Entries written only by
// AppendACSEntry) and its chain, oldest first.
type memACSSession struct {
	s     acsstate.Session
	chain []acsstate.Entry
}

// memReplays are the keys one session remembers, with the time each was
// recorded. Expired keys are forgotten lazily: when the map has grown to
// sweepAt, RememberRequest deletes those older than its window and sets
// sweepAt to twice what is left (at least minSweep). A session's map thus
// holds at most about twice the keys of one window, for O(1) amortized work
// per call.
type memReplays struct {
	at      map[string]time.Time
	sweepAt int
}

// minSweep is the fewest keys a session's replay map sweeps at.
const minSweep = 64

// acsLocked returns m's ACS data; the caller holds m.d.mu.
func (m *Mem) acsLocked() *memACS {
	if m.d.acs == nil {
		m.d.acs = &memACS{sessions: map[string]*memACSSession{}, replays: map[string]*memReplays{}}
	}
	return m.d.acs
}

// lockACS locks m's data for a change; it fails after Close.
func (m *Mem) lockACS(ctx context.Context) (*memACS, func(), error) {
	unlock, err := m.lockData(ctx)
	if err != nil {
		return nil, nil, err
	}
	return m.acsLocked(), unlock, nil
}

// copySession is s as returned: its own Methods.
func copySession(s *acsstate.Session) *acsstate.Session {
	c := *s
	c.Methods = slices.Clone(s.Methods)
	c.Profiles = slices.Clone(s.Profiles)
	return &c
}

// PutACSSession creates or replaces the session's handshake state, keeping
// its Head and Entries (a new session starts with an empty chain); it never
// clears Ended.
func (m *Mem) PutACSSession(ctx context.Context, s *acsstate.Session) error {
	if s == nil || s.ID == "" {
		return errors.New("storetest: ACS session has no id")
	}
	a, unlock, err := m.lockACS(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	c := copySession(s)
	c.Hello, c.LastSeen = usTime(s.Hello), usTime(s.LastSeen)
	c.Head, c.Entries = "", 0
	old, ok := a.sessions[s.ID]
	if !ok {
		a.sessions[s.ID] = &memACSSession{s: *c}
		return nil
	}
	c.Head, c.Entries, c.Ended = old.s.Head, old.s.Entries, old.s.Ended || s.Ended
	old.s = *c
	return nil
}

// ACSSession returns a copy of the session, or acsstate.ErrNoSession.
func (m *Mem) ACSSession(ctx context.Context, id string) (*acsstate.Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	s, ok := m.acsLocked().sessions[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", acsstate.ErrNoSession, id)
	}
	return copySession(&s.s), nil
}

// RememberRequest records key for the session at `at`, or is
// acsstate.ErrReplay if the session recorded it at or after at-window (and
// then records nothing).
func (m *Mem) RememberRequest(ctx context.Context, session, key string, at time.Time, window time.Duration) error {
	a, unlock, err := m.lockACS(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	r, ok := a.replays[session]
	if !ok {
		r = &memReplays{at: map[string]time.Time{}, sweepAt: minSweep}
		a.replays[session] = r
	}
	cutoff := at.Add(-window)
	if prev, ok := r.at[key]; ok && !prev.Before(cutoff) {
		return fmt.Errorf("%w: %q in session %q", acsstate.ErrReplay, key, session)
	}
	if len(r.at) >= r.sweepAt {
		for k, t := range r.at {
			if t.Before(cutoff) {
				delete(r.at, k)
			}
		}
		r.sweepAt = max(2*len(r.at), minSweep)
	}
	r.at[key] = usTime(at)
	return nil
}

// AppendACSEntry appends a copy of e to the session's chain if its head is
// prev, else it is acsstate.ErrChainMoved.
func (m *Mem) AppendACSEntry(ctx context.Context, session, prev string, e *acsstate.Entry) error {
	if e == nil || e.EntryHash == "" {
		return fmt.Errorf("storetest: ACS entry for session %q has no entry hash", session)
	}
	a, unlock, err := m.lockACS(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	s, ok := a.sessions[session]
	if !ok {
		return fmt.Errorf("%w: %q", acsstate.ErrNoSession, session)
	}
	if s.s.Head != prev {
		return fmt.Errorf("%w: session %q", acsstate.ErrChainMoved, session)
	}
	c := *e
	c.Timestamp = usTime(e.Timestamp)
	s.chain = append(s.chain, c)
	s.s.Head, s.s.Entries = c.EntryHash, int64(len(s.chain))
	return nil
}

// ACSEntries returns copies of the session's entries after the first
// `after`, oldest first, at most limit (<= 0: 1000).
func (m *Mem) ACSEntries(ctx context.Context, session string, after int64, limit int) ([]acsstate.Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = defaultACSEntries
	}
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	s, ok := m.acsLocked().sessions[session]
	if !ok {
		return nil, fmt.Errorf("%w: %q", acsstate.ErrNoSession, session)
	}
	n := int64(len(s.chain))
	start := min(max(after, 0), n)
	end := start + min(int64(limit), n-start)
	return append([]acsstate.Entry{}, s.chain[start:end]...), nil
}

// EndACSSession marks the session ended (at, which acsstate.Session does
// not show, is not kept).
func (m *Mem) EndACSSession(ctx context.Context, id string, at time.Time) error {
	a, unlock, err := m.lockACS(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	s, ok := a.sessions[id]
	if !ok {
		return fmt.Errorf("%w: %q", acsstate.ErrNoSession, id)
	}
	s.s.Ended = true
	return nil
}
