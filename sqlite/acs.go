package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/acsstate"
)

// ACS sessions (acsstate.Store, CONTRACT §9) live in three tables of
// trace.db (schema 8, schema.go): acs_sessions, one row per session;
// acs_entries, each session's audit chain, numbered from 1; acs_requests, the
// keys of each session's replay window. Every change is an IMMEDIATE
// transaction of prepared statements (acsstmt.go), with the trace's
// synchronous setting, so it is durable when the call returns: a session's
// creation and end on the approvals' connection; RememberRequest and
// AppendACSEntry, the two writes of every step, in the trace writer's
// batches, beside the records (acsbatch.go).
// SQLite's write lock serializes each against every other writer, also one
// in another process sharing the directory: two replicas never both record
// one request key, and AppendACSEntry is a compare-and-set of the head
// (UPDATE ... WHERE head = prev), so two appenders never both extend one
// head. Reads go through the read-only connections (also on a store from
// OpenReadOnly); the changing methods return ErrReadOnly there, and
// ErrClosed after Close.
//
// Replay keys are forgotten eagerly but cheaply: each RememberRequest that
// records its key deletes the session's keys older than its window, one range seek on
// acs_requests_at (session, at) that finds the few keys that expired since
// the session's previous request. A session thus holds only the keys of its
// last window; one that goes quiet keeps them: as many as the requests of
// that window, each of which also added an entry to its chain. Keys are not
// pruned across sessions: the window is the caller's, per call, and one
// session's request is no occasion to judge another's keys.
//
// Times are stored as unix microseconds (UTC) like the approvals, 0 for the
// zero time; they read back in UTC, truncated to the microsecond.

var _ acsstate.Store = (*Store)(nil)

// defaultACSEntries is ACSEntries' limit when it is given none.
const defaultACSEntries = 1000

// PutACSSession creates or replaces the session's handshake state in one
// upsert. Head and Entries are never written by it (a new session starts
// with an empty chain), and it never clears ended: a Put made from a copy
// read before EndACSSession cannot reopen the session.
func (s *Store) PutACSSession(ctx context.Context, x *acsstate.Session) error {
	if x == nil || x.ID == "" {
		return errors.New("sqlite: ACS session has no id")
	}
	methods := []byte("[]")
	if len(x.Methods) > 0 {
		methods, _ = json.Marshal(x.Methods) // a []string always marshals
	}
	profiles := []byte("[]")
	if len(x.Profiles) > 0 {
		profiles, _ = json.Marshal(x.Profiles) // a []string always marshals
	}
	ended := 0
	if x.Ended {
		ended = 1
	}
	return s.acsTx(ctx, "put ACS session", []int{acsPut}, func(st []*sql.Stmt) error {
		_, err := st[0].ExecContext(ctx, x.ID, x.AgentID, x.Tenant, x.KeyID, x.Version,
			string(methods), micro(x.Hello), micro(x.LastSeen), ended, string(profiles))
		if err != nil {
			return s.approvalErr(ctx, "put ACS session", err)
		}
		return nil
	})
}

// ACSSession returns the session, or acsstate.ErrNoSession. It reads through
// the read-only connections of point reads (pointReader).
func (s *Store) ACSSession(ctx context.Context, id string) (*acsstate.Session, error) {
	st, err := s.acsStmt(acsGetSession)
	if err != nil {
		return nil, err
	}
	x, err := scanACSSession(st.QueryRowContext(ctx, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %q", acsstate.ErrNoSession, id)
	}
	if err != nil {
		return nil, s.readErr(ctx, "read ACS session", err)
	}
	return x, nil
}

// RememberRequest records key for the session at `at`, or returns
// acsstate.ErrReplay (writing nothing) if the session recorded it at or after
// at-window. In one transaction it deletes the session's keys older than
// the window, then inserts the key unless it is still there.
func (s *Store) RememberRequest(ctx context.Context, session, key string, at time.Time, window time.Duration) error {
	return s.acsDo(ctx, &acsOp{session: session, key: key, at: at, window: window})
}

// AppendACSEntry appends e to the session's chain if its head is still
// prev: one UPDATE ... WHERE head = prev moves the head and counts the entry,
// and the entry is inserted with that count as its seq, in one transaction.
// Otherwise it is acsstate.ErrChainMoved, or acsstate.ErrNoSession, and nothing
// is written. e must have an EntryHash (the next head). It is committed
// in the trace writer's batch, with records and other calls (acsbatch.go).
func (s *Store) AppendACSEntry(ctx context.Context, session, prev string, e *acsstate.Entry) error {
	if e == nil || e.EntryHash == "" {
		return fmt.Errorf("sqlite: ACS entry for session %q has no entry hash", session)
	}
	return s.acsDo(ctx, &acsOp{session: session, prev: prev, e: e})
}

// ACSEntries returns the session's entries after the first `after`, oldest
// first, at most limit (<= 0: 1000); never nil. An unknown session is
// acsstate.ErrNoSession. It reads through the read-only connections.
func (s *Store) ACSEntries(ctx context.Context, session string, after int64, limit int) ([]acsstate.Entry, error) {
	if limit <= 0 {
		limit = defaultACSEntries
	}
	st, err := s.acsStmt(acsGetEntries)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, session, after, limit)
	if err != nil {
		return nil, s.readErr(ctx, "read ACS entries", err)
	}
	defer rows.Close()
	out := []acsstate.Entry{}
	for rows.Next() {
		e, err := scanACSEntry(rows)
		if err != nil {
			return nil, s.readErr(ctx, "read ACS entries", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(ctx, "read ACS entries", err)
	}
	if len(out) == 0 { // none: is there such a session?
		if _, err := s.ACSSession(ctx, session); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// EndACSSession marks the session ended; the first call's at is kept in
// ended_at (not part of acsstate.Session). An unknown session is
// acsstate.ErrNoSession.
func (s *Store) EndACSSession(ctx context.Context, id string, at time.Time) error {
	const what = "end ACS session"
	return s.acsTx(ctx, what, []int{acsEnd}, func(st []*sql.Stmt) error {
		res, err := st[0].ExecContext(ctx, micro(at), id)
		if err != nil {
			return s.approvalErr(ctx, what, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return s.approvalErr(ctx, what, err)
		} else if n == 0 {
			return fmt.Errorf("%w: %q", acsstate.ErrNoSession, id)
		}
		return nil
	})
}
