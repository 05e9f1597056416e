package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/internal/tracesql"
)

// Approvals live in the approvals table of trace.db (schema.go), one row
// each. They are few and each is written once or a few times, so they do not
// go through the record writer's group commit: every write is one short
// IMMEDIATE transaction on a connection of their own (Store.adb), with the
// trace's synchronous setting, so an approval is as durable as a record when
// its call returns. Every state change is a compare-and-set in SQL (UPDATE
// ... WHERE state = 'pending'): SQLite's write lock serializes it against
// every other writer, also in another process sharing the directory, so two
// approvers (or two replicas) can never both decide one approval, and two
// retries can never both use one. Reads (Approval, ListApprovals) go through
// the read-only connections, so they also work on a store from OpenReadOnly;
// the writing methods there return ErrReadOnly, and ErrClosed after Close.
//
// Times are stored as unix microseconds (UTC) like runs.time, 0 for the zero
// time; they read back in UTC, truncated to the microsecond.

var _ approval.ApprovalStore = (*Store)(nil)

// approvalCols are the columns of a approval.Approval, in scanApproval's order.
const approvalCols = `id, state, event, surface, session_id, agent_id, tool,
	summary, reason, policy_id, created, expires, decided_by, decided_reason,
	decided_at, record_id, decision_record_id, caller, tenant, key, hold,
	used_at, used_record_id`

// micro is t in unix microseconds, 0 for the zero time.
func micro(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// fromMicro is the time of a stored micro(t): UTC, 0 the zero time.
func fromMicro(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanApproval reads one row of approvalCols.
func scanApproval(sc scanner) (*approval.Approval, error) {
	a := new(approval.Approval)
	var state string
	var created, expires, decided, used, hold int64
	if err := sc.Scan(&a.ID, &state, &a.Event, &a.Surface, &a.SessionID, &a.AgentID,
		&a.Tool, &a.Summary, &a.Reason, &a.PolicyID, &created, &expires,
		&a.DecidedBy, &a.DecidedReason, &decided, &a.RecordID, &a.DecisionRecordID,
		&a.Caller, &a.Tenant, &a.Key, &hold, &used, &a.UsedRecordID); err != nil {
		return nil, err
	}
	a.State = approval.ApprovalState(state)
	a.Created, a.Expires = fromMicro(created), fromMicro(expires)
	a.DecidedAt, a.UsedAt = fromMicro(decided), fromMicro(used)
	a.Hold = hold != 0
	return a, nil
}

// queryApprovals runs a query returning approvalCols rows (a SELECT, or an
// UPDATE ... RETURNING) and reads them all.
func queryApprovals(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args ...any) ([]approval.Approval, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []approval.Approval{}
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *a)
	}
	return out, rows.Err()
}

// approvalTx runs fn in one IMMEDIATE transaction (the approvals
// connection's _txlock) and commits it when fn returns nil. It holds the
// store's R lock throughout, so Close waits for it.
func (s *Store) approvalTx(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	if s.adb == nil {
		return ErrReadOnly
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	s.txMu.Lock() // see Store.txMu
	defer s.txMu.Unlock()
	tx, err := s.adb.BeginTx(ctx, nil)
	if err != nil {
		return s.approvalErr(ctx, what, err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return s.approvalErr(ctx, what, err)
	}
	return nil
}

// approvalErr is ctx's error if ctx is done, else err with context.
func (s *Store) approvalErr(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("sqlite: %s: %w", what, ctx.Err())
	}
	return fmt.Errorf("sqlite: %s: %w", what, err)
}

// CreateApproval stores a as a new, pending approval. a.State must be
// pending or empty (stored as pending); a.ID must be new. The other fields
// are stored as given.
func (s *Store) CreateApproval(ctx context.Context, a *approval.Approval) error {
	if a == nil || a.ID == "" {
		return errors.New("sqlite: approval has no id")
	}
	if a.State != "" && a.State != approval.ApprovalPending {
		return fmt.Errorf("sqlite: new approval %q has state %q, want pending", a.ID, a.State)
	}
	hold := 0
	if a.Hold {
		hold = 1
	}
	return s.approvalTx(ctx, "create approval", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO approvals (`+approvalCols+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			a.ID, string(approval.ApprovalPending), a.Event, a.Surface, a.SessionID, a.AgentID,
			a.Tool, a.Summary, a.Reason, a.PolicyID, micro(a.Created), micro(a.Expires),
			a.DecidedBy, a.DecidedReason, micro(a.DecidedAt), a.RecordID, a.DecisionRecordID,
			a.Caller, a.Tenant, a.Key, hold, micro(a.UsedAt), a.UsedRecordID)
		if isConstraint(err) {
			return fmt.Errorf("sqlite: approval %q exists already", a.ID)
		}
		if err != nil {
			return s.approvalErr(ctx, "create approval", err)
		}
		return nil
	})
}

// Approval returns the approval with id, or approval.ErrApprovalNotFound. It
// reads through the read-only connections (also on a read-only store).
func (s *Store) Approval(ctx context.Context, id string) (*approval.Approval, error) {
	a, err := scanApproval(s.rdb.QueryRowContext(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %q", approval.ErrApprovalNotFound, id)
	}
	if err != nil {
		return nil, s.readErr(ctx, "read approval", err)
	}
	return a, nil
}

// ListApprovals returns the approvals q selects, newest first: by Created,
// then by id, both descending. q.After continues after that approval in
// this order (it need not match q's filters); an id the store does not hold
// is audit.ErrUnknownCursor. q.Limit <= 0 means 100; more than 1000 means
// 1000. The slice is never nil. It reads through the read-only connections
// (also on a read-only store).
func (s *Store) ListApprovals(ctx context.Context, q approval.ApprovalQuery) ([]approval.Approval, error) {
	limit := q.EffectiveLimit()
	var conds []string
	var args []any
	for _, f := range []struct{ col, v string }{
		{"state", string(q.State)}, {"tenant", q.Tenant}, {"session_id", q.Session},
	} {
		if f.v != "" {
			conds = append(conds, f.col+" = ?")
			args = append(args, f.v)
		}
	}
	if q.After != "" {
		var created int64
		err := s.rdb.QueryRowContext(ctx, `SELECT created FROM approvals WHERE id = ?`, q.After).Scan(&created)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("sqlite: %w: %q", audit.ErrUnknownCursor, q.After)
		}
		if err != nil {
			return nil, s.readErr(ctx, "find approval cursor", err)
		}
		conds = append(conds, "(created < ? OR (created = ? AND id < ?))")
		args = append(args, created, created, q.After)
	}
	query := `SELECT ` + approvalCols + ` FROM approvals`
	if len(conds) > 0 {
		query += " WHERE " + strings.Join(conds, " AND ")
	}
	query += " ORDER BY created DESC, id DESC LIMIT ?"
	out, err := queryApprovals(ctx, s.rdb, query, append(args, limit)...)
	if err != nil {
		return nil, s.readErr(ctx, "list approvals", err)
	}
	return out, nil
}

// DecideApproval moves the pending approval id to state (approved, denied or
// expired) with by, reason and at (stored to the microsecond), and returns it
// as stored. It is one compare-and-set: the row changes only while it is
// pending and, to approve or deny, while its Expires is not before at.
//
// An approve or deny that comes after Expires expires the approval instead,
// in the same transaction, exactly as ExpireApprovals at `at` would (state
// expired, DecidedAt at, DecidedReason "approval_timeout", no DecidedBy; the
// given by and reason are dropped), and returns it with
// approval.ErrApprovalDecided: it reads as expired from then on. An approval
// that is not pending is returned as stored with approval.ErrApprovalDecided;
// an unknown id is approval.ErrApprovalNotFound. Expiring (state expired) is
// allowed at any time, before Expires too (a held call that hung up).
func (s *Store) DecideApproval(ctx context.Context, id string, state approval.ApprovalState, by, reason string, at time.Time) (*approval.Approval, error) {
	switch state {
	case approval.ApprovalApproved, approval.ApprovalDenied, approval.ApprovalExpired:
	default:
		return nil, fmt.Errorf("sqlite: cannot decide approval %q to state %q", id, state)
	}
	if at.IsZero() {
		return nil, fmt.Errorf("sqlite: decide approval %q: no time", id)
	}
	var got *approval.Approval
	var outErr error
	err := s.approvalTx(ctx, "decide approval", func(tx *sql.Tx) error {
		const set = `UPDATE approvals SET state = ?, decided_by = ?, decided_reason = ?, decided_at = ?
			WHERE id = ? AND state = 'pending'`
		args := []any{string(state), by, reason, micro(at), id}
		query := set
		if state != approval.ApprovalExpired {
			// Expires is not before at: expires >= at, to the µs.
			query += ` AND expires >= ?`
			args = append(args, tracesql.CeilMicro(at))
		}
		rows, err := queryApprovals(ctx, tx, query+` RETURNING `+approvalCols, args...)
		if err != nil {
			return s.approvalErr(ctx, "decide approval", err)
		}
		if len(rows) == 1 {
			got = &rows[0]
			return nil
		}
		// Not changed: either not pending (or unknown), or, to approve or
		// deny, overdue. Holding the write lock, a pending row here is
		// overdue: expire it.
		outErr = approval.ErrApprovalDecided
		if state != approval.ApprovalExpired {
			rows, err = queryApprovals(ctx, tx, set+` RETURNING `+approvalCols,
				string(approval.ApprovalExpired), "", warden.CodeApprovalTimeout, micro(at), id)
			if err != nil {
				return s.approvalErr(ctx, "decide approval", err)
			}
			if len(rows) == 1 {
				got = &rows[0]
				return nil
			}
		}
		got, err = scanApproval(tx.QueryRowContext(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			got, outErr = nil, approval.ErrApprovalNotFound
			return nil
		}
		if err != nil {
			return s.approvalErr(ctx, "decide approval", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if outErr != nil {
		return got, fmt.Errorf("%w: %q", outErr, id)
	}
	return got, nil
}

// SetDecisionRecord sets the DecisionRecordID of approval id (whatever its
// state; a later call replaces it); an unknown id is
// approval.ErrApprovalNotFound.
func (s *Store) SetDecisionRecord(ctx context.Context, id, recordID string) error {
	return s.approvalTx(ctx, "set decision record", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE approvals SET decision_record_id = ? WHERE id = ?`, recordID, id)
		if err != nil {
			return s.approvalErr(ctx, "set decision record", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return s.approvalErr(ctx, "set decision record", err)
		}
		if n == 0 {
			return fmt.Errorf("%w: %q", approval.ErrApprovalNotFound, id)
		}
		return nil
	})
}

// UseApproval marks used, at `at` by the record recordID, the approved,
// unused approval with key whose DecidedAt is at or after notBefore (the
// earliest decided, if several are), and returns it; none is (nil, nil), and
// so is an empty key. It is one UPDATE whose subquery picks the approval and
// whose WHERE re-checks used_at = 0: SQLite runs the statement under its
// write lock, so of concurrent retries (in this process or another) exactly
// one gets a given approval.
func (s *Store) UseApproval(ctx context.Context, key string, notBefore, at time.Time, recordID string) (*approval.Approval, error) {
	if at.IsZero() {
		return nil, errors.New("sqlite: use approval: no time")
	}
	var got *approval.Approval
	err := s.approvalTx(ctx, "use approval", func(tx *sql.Tx) error {
		if key == "" {
			return nil
		}
		// The subquery's terms include approvals_key's WHERE, so it reads
		// that partial index in decided_at order.
		rows, err := queryApprovals(ctx, tx, `UPDATE approvals SET used_at = ?, used_record_id = ?
			WHERE id = (SELECT id FROM approvals
				WHERE key = ? AND state = 'approved' AND used_at = 0 AND decided_at >= ?
				ORDER BY decided_at, id LIMIT 1)
			AND state = 'approved' AND used_at = 0
			RETURNING `+approvalCols,
			micro(at), recordID, key, tracesql.CeilMicro(notBefore))
		if err != nil {
			return s.approvalErr(ctx, "use approval", err)
		}
		if len(rows) == 1 {
			got = &rows[0]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return got, nil
}

// ExpireApprovals moves every pending approval whose Expires is before at to
// expired (DecidedAt at, DecidedReason "approval_timeout", no DecidedBy) in
// one statement, and returns them, oldest Created first (then by id).
func (s *Store) ExpireApprovals(ctx context.Context, at time.Time) ([]approval.Approval, error) {
	if at.IsZero() {
		return nil, errors.New("sqlite: expire approvals: no time")
	}
	var out []approval.Approval
	err := s.approvalTx(ctx, "expire approvals", func(tx *sql.Tx) error {
		var err error
		out, err = queryApprovals(ctx, tx, `UPDATE approvals
			SET state = 'expired', decided_by = '', decided_reason = ?, decided_at = ?
			WHERE state = 'pending' AND expires < ?
			RETURNING `+approvalCols,
			warden.CodeApprovalTimeout, micro(at), tracesql.CeilMicro(at))
		if err != nil {
			return s.approvalErr(ctx, "expire approvals", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b approval.Approval) int {
		return cmp.Or(a.Created.Compare(b.Created), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}
