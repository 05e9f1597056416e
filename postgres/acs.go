package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/wardenhq/warden/acsstate"
	"github.com/wardenhq/warden/internal/tracesql"

	"github.com/jackc/pgx/v5"
)

// ACS sessions (acsstate.Store, docs/acs.md) live in acs_sessions,
// acs_entries and acs_requests (schema 2). acsstate.Rules holds what they
// mean; this file moves the rows (acsstate.Rows), with the statements
// SQLite runs too (tracesql). The two writes of every step are one
// statement each, so each is atomic on its own and needs one round trip:
//
//   - Remember is an INSERT … ON CONFLICT (session, key) DO UPDATE that
//     renews the key only when its earlier record is older than the
//     window. Two replicas remembering one key at once: PostgreSQL makes
//     the second wait for the first's insert, then evaluates the DO
//     UPDATE's WHERE on the row the first wrote, which is in the window:
//     nothing is returned, a replay. A key is thus accepted once per
//     window fleet-wide. The same statement forgets the session's keys
//     that left the window (only when it accepts the key).
//   - Append is an UPDATE of the session's head WHERE head = prev, whose
//     RETURNING feeds the INSERT of the entry. Two replicas appending on
//     one head: the second waits for the first's row lock, re-evaluates
//     head = prev on the moved head, updates nothing and inserts nothing.
//     The head advances exactly once per step and the chain stays
//     contiguous (seq 1, 2, …).
//
// A session's deferral count (ACS defer bound) is read from its entries, so
// it is shared with the chain.

var _ acsstate.Store = (*Store)(nil)

// acsRules is the acsstate.Store a Store embeds (newACS).
type acsRules = acsstate.Rules

// acsRows are a Store's ACS rows.
type acsRows Store

func newACS(s *Store) acsRules { return acsstate.Rules{Rows: (*acsRows)(s)} }

// acsRow runs q, bounded by stateCtx, and scans its one row with scan
// (none: ok is false); write says it changes state (not on a read-only or
// closed store).
func (r *acsRows) acsRow(ctx context.Context, what string, write bool, scan func(pgx.Row) error, q string, args ...any) (ok bool, err error) {
	s := (*Store)(r)
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	if write {
		if err := s.writable(); err != nil {
			return false, err
		}
	}
	switch err := scan(s.statePool().QueryRow(ctx, q, pgArgs(args...)...)); {
	case errors.Is(err, pgx.ErrNoRows):
		return false, nil
	case err != nil:
		return false, stateErr(ctx, what, err)
	}
	return true, nil
}

// scanned scans a row into dest.
func scanned(dest ...any) func(pgx.Row) error {
	return func(row pgx.Row) error { return row.Scan(dest...) }
}

func (r *acsRows) PutSession(ctx context.Context, x *acsstate.Session) error {
	_, err := r.acsRow(ctx, "put ACS session", true, scanned(nil), tracesql.ACSPut+` RETURNING 0`,
		x.ID, x.AgentID, x.Tenant, x.KeyID, x.Version, x.Methods, toUS(x.Hello), toUS(x.LastSeen), x.Ended, x.Profiles)
	return err
}

func (r *acsRows) Session(ctx context.Context, id string) (x *acsstate.Session, err error) {
	_, err = r.acsRow(ctx, "read ACS session", false, func(row pgx.Row) (err error) {
		x, err = tracesql.ScanACSSession(row.Scan, func(p *[]string) any { return p })
		return err
	}, tracesql.ACSGet, id)
	return x, err
}

func (r *acsRows) Remember(ctx context.Context, session, key string, at, cutoff time.Time) (bool, error) {
	var n int
	_, err := r.acsRow(ctx, "remember ACS request", true, scanned(&n), `WITH ins AS (`+tracesql.ACSRemember+` RETURNING 1),
		gone AS (DELETE FROM acs_requests WHERE session = $1 AND at < $4 AND key <> $2
			AND EXISTS (SELECT 1 FROM ins))
		SELECT count(*) FROM ins`, session, key, at.UnixMicro(), cutoff.UnixMicro())
	return n > 0, err
}

func (r *acsRows) Append(ctx context.Context, session, prev string, e *acsstate.Entry) (bool, error) {
	return r.acsRow(ctx, "append ACS entry", true, scanned(nil), `WITH adv AS (`+tracesql.ACSAdvance+`)
		INSERT INTO acs_entries (session, seq, `+tracesql.ACSEntryCols+`)
		SELECT $1, entries, $4, $5, $6, $7, $8, $9, $3, $10, $11 FROM adv
		RETURNING 0`, session, prev, e.EntryHash, e.EntryID, e.StepID, e.StepType, e.RequestHash,
		toUS(e.Timestamp), e.PreviousHash, e.Decision, e.RecordID)
}

func (r *acsRows) End(ctx context.Context, id string, at time.Time) (bool, error) {
	return r.acsRow(ctx, "end ACS session", true, scanned(nil), tracesql.ACSEnd+` RETURNING 0`, id, toUS(at))
}

func (r *acsRows) Entries(ctx context.Context, session string, after int64, limit int) ([]acsstate.Entry, error) {
	s := (*Store)(r)
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	rows, err := s.statePool().Query(ctx, tracesql.ACSList, pgArgs(session, after, limit)...)
	if err == nil {
		defer rows.Close()
		var es []acsstate.Entry
		if es, err = tracesql.ScanACSEntries(rows); err == nil {
			return es, nil
		}
	}
	return nil, stateErr(ctx, "read ACS entries", err)
}
