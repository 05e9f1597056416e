package acsstate

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Rows are what a backend keeps of ACS sessions: a row per session, its
// chain's entries numbered from 1, and the request keys of its replay
// window. Rules gives them their meaning; a backend only moves them. Each
// method is atomic on its own, also across the replicas sharing the rows.
// What Rules passes is the backend's to keep; what it returns is the
// caller's.
type Rows interface {
	// PutSession inserts s, or updates the row of s.ID with s's fields but
	// Head and Entries (a new row has Rules' "" and 0); Ended is set by
	// s.Ended but never cleared.
	PutSession(ctx context.Context, s *Session) error
	// Session returns the row of id, nil when there is none.
	Session(ctx context.Context, id string) (*Session, error)
	// Remember records key for session at `at` unless it holds the key at
	// or after cutoff: then ok is false and nothing is written. Recording
	// it may forget the session's keys from before cutoff.
	Remember(ctx context.Context, session, key string, at, cutoff time.Time) (ok bool, err error)
	// Append, if the session's Head is prev, makes e.EntryHash its Head,
	// adds one to its Entries and keeps e as the entry of that number;
	// otherwise (no such session, too) ok is false and nothing is written.
	Append(ctx context.Context, session, prev string, e *Entry) (ok bool, err error)
	// Entries returns the session's entries numbered after `after`, in
	// order, at most limit.
	Entries(ctx context.Context, session string, after int64, limit int) ([]Entry, error)
	// End sets Ended on the row of id and keeps at as when, the first time;
	// ok is false when there is no such row.
	End(ctx context.Context, id string, at time.Time) (ok bool, err error)
}

// Rules is the Store that keeps its state in Rows: the checks, bounds,
// copies and errors of every backend, written once. Times are kept in UTC
// to the microsecond.
type Rules struct{ Rows Rows }

var _ Store = Rules{}

// DefaultEntries is ACSEntries' limit when it is given none.
const DefaultEntries = 1000

// PutACSSession implements Store: a copy of s, with an empty chain for a
// new session, Methods and Profiles never nil.
func (r Rules) PutACSSession(ctx context.Context, s *Session) error {
	if s == nil || s.ID == "" {
		return errors.New("warden: ACS session has no id")
	}
	c := *s
	c.Methods, c.Profiles = append([]string{}, s.Methods...), append([]string{}, s.Profiles...)
	c.Hello, c.LastSeen, c.Head, c.Entries = micro(s.Hello), micro(s.LastSeen), "", 0
	return r.Rows.PutSession(ctx, &c)
}

// ACSSession implements Store (empty Methods and Profiles are nil).
func (r Rules) ACSSession(ctx context.Context, id string) (*Session, error) {
	s, err := r.Rows.Session(ctx, id)
	if err == nil && s == nil {
		err = fmt.Errorf("%w: %q", ErrNoSession, id)
	}
	if err != nil {
		return nil, err
	}
	s.Methods, s.Profiles = nilIfEmpty(s.Methods), nilIfEmpty(s.Profiles)
	return s, nil
}

// RememberRequest implements Store: the key is a replay while it was
// recorded at or after at-window (to the microsecond, rounded up).
func (r Rules) RememberRequest(ctx context.Context, session, key string, at time.Time, window time.Duration) error {
	cutoff := at.Add(-window)
	if c := cutoff.Truncate(time.Microsecond); c.Before(cutoff) {
		cutoff = c.Add(time.Microsecond)
	}
	ok, err := r.Rows.Remember(ctx, session, key, micro(at), micro(cutoff))
	if err == nil && !ok {
		err = fmt.Errorf("%w: %q in session %q", ErrReplay, key, session)
	}
	return err
}

// AppendACSEntry implements Store: e must have an EntryHash (the next
// head). A refused append is ErrNoSession when there is no such session.
func (r Rules) AppendACSEntry(ctx context.Context, session, prev string, e *Entry) error {
	if e == nil || e.EntryHash == "" {
		return fmt.Errorf("warden: ACS entry for session %q has no entry hash", session)
	}
	c := *e
	c.Timestamp = micro(e.Timestamp)
	ok, err := r.Rows.Append(ctx, session, prev, &c)
	if err != nil || ok {
		return err
	}
	if _, err := r.ACSSession(ctx, session); err != nil {
		return err
	}
	return fmt.Errorf("%w: session %q", ErrChainMoved, session)
}

// ACSEntries implements Store; the entries are never nil.
func (r Rules) ACSEntries(ctx context.Context, session string, after int64, limit int) ([]Entry, error) {
	if limit <= 0 {
		limit = DefaultEntries
	}
	es, err := r.Rows.Entries(ctx, session, max(after, 0), limit)
	if err != nil {
		return nil, err
	}
	if len(es) == 0 { // none: is there such a session?
		if _, err := r.ACSSession(ctx, session); err != nil {
			return nil, err
		}
		es = []Entry{}
	}
	return es, nil
}

// EndACSSession implements Store; ending twice is no error.
func (r Rules) EndACSSession(ctx context.Context, id string, at time.Time) error {
	ok, err := r.Rows.End(ctx, id, micro(at))
	if err == nil && !ok {
		err = fmt.Errorf("%w: %q", ErrNoSession, id)
	}
	return err
}

// micro is t in UTC, truncated to the microsecond (the zero time stays).
func micro(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.Truncate(time.Microsecond).UTC()
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
