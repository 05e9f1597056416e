package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/acsstate"

	"github.com/jackc/pgx/v5"
)

// ACS sessions (acsstate.Store, CONTRACT §9) live in acs_sessions,
// acs_entries and acs_requests (schema 2). The two writes of every step are
// one statement each, so each is atomic on its own and needs one round trip:
//
//   - RememberRequest is an INSERT … ON CONFLICT (session, key) DO UPDATE
//     that renews the key only when its earlier record is older than the
//     window. Two replicas remembering one key at once: PostgreSQL makes the
//     second wait for the first's insert, then evaluates the DO UPDATE's
//     WHERE on the row the first wrote, which is in the window: nothing is
//     returned, and it is acsstate.ErrReplay. A key is thus accepted once per
//     window fleet-wide. The same statement forgets the session's keys that
//     left the window (only when it accepts the key: a replay writes
//     nothing).
//   - AppendACSEntry is an UPDATE of the session's head WHERE head = prev,
//     whose RETURNING feeds the INSERT of the entry. Two replicas appending
//     on one head: the second waits for the first's row lock, re-evaluates
//     head = prev on the moved head, updates nothing and inserts nothing:
//     acsstate.ErrChainMoved. The head advances exactly once per step and the
//     chain stays contiguous (seq 1, 2, …).
//
// A session's deferral count (ACS defer bound) is read from its entries, so
// it is shared with the chain.

var _ acsstate.Store = (*Store)(nil)

// defaultACSEntries is ACSEntries' limit when it is given none.
const defaultACSEntries = 1000

const (
	acsSessionCols = `id, agent_id, tenant, key_id, version, methods, hello, last_seen, head, entries, ended, profiles`
	acsEntryCols   = `entry_id, step_id, step_type, request_hash, timestamp, previous_hash, entry_hash, decision, record_id`
)

// PutACSSession creates or replaces the session's handshake state in one
// upsert. Head and Entries are never written by it, and it never clears
// ended: a Put made from a copy read before EndACSSession cannot reopen the
// session.
func (s *Store) PutACSSession(ctx context.Context, x *acsstate.Session) error {
	if x == nil || x.ID == "" {
		return errors.New("postgres: ACS session has no id")
	}
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	if err := s.writable(); err != nil {
		return err
	}
	methods, profiles := x.Methods, x.Profiles
	if methods == nil {
		methods = []string{}
	}
	if profiles == nil {
		profiles = []string{}
	}
	_, err := s.statePool().Exec(ctx, `INSERT INTO acs_sessions (`+acsSessionCols+`, ended_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, '', 0, $9, $10, 0)
		ON CONFLICT (id) DO UPDATE SET agent_id = excluded.agent_id,
			tenant = excluded.tenant, key_id = excluded.key_id,
			version = excluded.version, methods = excluded.methods,
			hello = excluded.hello, last_seen = excluded.last_seen, profiles = excluded.profiles,
			ended = acs_sessions.ended OR excluded.ended`,
		pgArgs(x.ID, x.AgentID, x.Tenant, x.KeyID, x.Version, methods,
			toUS(x.Hello), toUS(x.LastSeen), x.Ended, profiles)...)
	if err != nil {
		return stateErr(ctx, "put ACS session", err)
	}
	return nil
}

// ACSSession returns the session, or acsstate.ErrNoSession.
func (s *Store) ACSSession(ctx context.Context, id string) (*acsstate.Session, error) {
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	x := new(acsstate.Session)
	var hello, seen int64
	err := s.statePool().QueryRow(ctx, `SELECT `+acsSessionCols+` FROM acs_sessions WHERE id = $1`, pgArgs(id)...).Scan(
		&x.ID, &x.AgentID, &x.Tenant, &x.KeyID, &x.Version, &x.Methods,
		&hello, &seen, &x.Head, &x.Entries, &x.Ended, &x.Profiles)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: %q", acsstate.ErrNoSession, id)
	}
	if err != nil {
		return nil, stateErr(ctx, "read ACS session", err)
	}
	if len(x.Methods) == 0 {
		x.Methods = nil
	}
	if len(x.Profiles) == 0 {
		x.Profiles = nil
	}
	x.Hello, x.LastSeen = fromUS(hello), fromUS(seen)
	return x, nil
}

// RememberRequest records key for the session at `at`, or returns
// acsstate.ErrReplay (writing nothing) if the session recorded it at or after
// at-window; accepting it also forgets the session's keys older than the
// window. One statement (see the top of this file).
func (s *Store) RememberRequest(ctx context.Context, session, key string, at time.Time, window time.Duration) error {
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	if err := s.writable(); err != nil {
		return err
	}
	cutoff := ceilUS(at.Add(-window))
	var n int
	err := s.statePool().QueryRow(ctx, `WITH ins AS (
			INSERT INTO acs_requests (session, key, at) VALUES ($1, $2, $3)
			ON CONFLICT (session, key) DO UPDATE SET at = excluded.at WHERE acs_requests.at < $4
			RETURNING 1),
		gone AS (
			DELETE FROM acs_requests WHERE session = $1 AND at < $4 AND key <> $2
			AND EXISTS (SELECT 1 FROM ins))
		SELECT count(*) FROM ins`,
		pgArgs(session, key, at.UnixMicro(), cutoff)...).Scan(&n)
	if err != nil {
		return stateErr(ctx, "remember ACS request", err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %q in session %q", acsstate.ErrReplay, key, session)
	}
	return nil
}

// AppendACSEntry appends e to the session's chain if its head is still
// prev, in one statement: the head's compare-and-set feeds the entry's
// insert. Otherwise it is acsstate.ErrChainMoved, or acsstate.ErrNoSession, and
// nothing is written. e must have an EntryHash (the next head).
func (s *Store) AppendACSEntry(ctx context.Context, session, prev string, e *acsstate.Entry) error {
	if e == nil || e.EntryHash == "" {
		return fmt.Errorf("postgres: ACS entry for session %q has no entry hash", session)
	}
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	if err := s.writable(); err != nil {
		return err
	}
	const what = "append ACS entry"
	var seq int64
	err := s.statePool().QueryRow(ctx, `WITH adv AS (
			UPDATE acs_sessions SET head = $3, entries = entries + 1
			WHERE id = $1 AND head = $2 RETURNING entries)
		INSERT INTO acs_entries (session, seq, `+acsEntryCols+`)
		SELECT $1, entries, $4, $5, $6, $7, $8, $9, $3, $10, $11 FROM adv
		RETURNING seq`,
		pgArgs(session, prev, e.EntryHash, e.EntryID, e.StepID, e.StepType, e.RequestHash,
			toUS(e.Timestamp), e.PreviousHash, e.Decision, e.RecordID)...).Scan(&seq)
	if errors.Is(err, pgx.ErrNoRows) {
		var one int
		switch err = s.statePool().QueryRow(ctx, `SELECT 1 FROM acs_sessions WHERE id = $1`, pgArgs(session)...).Scan(&one); {
		case errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("%w: %q", acsstate.ErrNoSession, session)
		case err == nil:
			return fmt.Errorf("%w: session %q", acsstate.ErrChainMoved, session)
		}
	}
	if err != nil {
		return stateErr(ctx, what, err)
	}
	return nil
}

// ACSEntries returns the session's entries after the first `after`, oldest
// first, at most limit (<= 0: 1000); never nil. An unknown session is
// acsstate.ErrNoSession.
func (s *Store) ACSEntries(ctx context.Context, session string, after int64, limit int) ([]acsstate.Entry, error) {
	if limit <= 0 {
		limit = defaultACSEntries
	}
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	const what = "read ACS entries"
	rows, err := s.statePool().Query(ctx, `SELECT `+acsEntryCols+` FROM acs_entries
		WHERE session = $1 AND seq > $2 ORDER BY seq LIMIT $3`, pgArgs(session, after, limit)...)
	if err != nil {
		return nil, stateErr(ctx, what, err)
	}
	defer rows.Close()
	out := []acsstate.Entry{}
	for rows.Next() {
		var e acsstate.Entry
		var ts int64
		if err := rows.Scan(&e.EntryID, &e.StepID, &e.StepType, &e.RequestHash, &ts,
			&e.PreviousHash, &e.EntryHash, &e.Decision, &e.RecordID); err != nil {
			return nil, stateErr(ctx, what, err)
		}
		e.Timestamp = fromUS(ts)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, stateErr(ctx, what, err)
	}
	if len(out) == 0 { // none: is there such a session?
		if _, err := s.ACSSession(ctx, session); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// EndACSSession marks the session ended; the first call's at is kept in
// ended_at. An unknown session is acsstate.ErrNoSession.
func (s *Store) EndACSSession(ctx context.Context, id string, at time.Time) error {
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	if err := s.writable(); err != nil {
		return err
	}
	tag, err := s.statePool().Exec(ctx, `UPDATE acs_sessions SET ended = true,
		ended_at = CASE WHEN ended_at = 0 THEN $1 ELSE ended_at END WHERE id = $2`, pgArgs(toUS(at), id)...)
	if err != nil {
		return stateErr(ctx, "end ACS session", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: %q", acsstate.ErrNoSession, id)
	}
	return nil
}
