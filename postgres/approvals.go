package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/audit"

	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wardenhq/warden"
)

// Approvals (approval.ApprovalStore, CONTRACT §11) live in the approvals table,
// one row each. Every state change is a compare-and-set in one UPDATE
// (… WHERE state = 'pending', … AND used_at = 0): a second replica deciding
// the same approval waits for the first one's row lock, then finds the row
// no longer pending, so it gets approval.ErrApprovalDecided (the API's 409)
// and exactly one decision is ever stored. Each change that another
// replica's approval manager must see — a new approval, a decision, an
// expiry — sends a notification on the store's approval channel in the
// same transaction (notify.go): it is delivered when, and only if, the
// change commits.

var _ approval.ApprovalStore = (*Store)(nil)

// useAttempts bounds UseApproval's pick-then-claim rounds: each lost round
// means a concurrent retry claimed the approval picked.
const useAttempts = 64

// approvalCols are the columns of a approval.Approval, in scanApproval's order.
const approvalCols = `id, state, event, surface, session_id, agent_id, tool,
	summary, reason, policy_id, created, expires, decided_by, decided_reason,
	decided_at, record_id, decision_record_id, caller, tenant, key, hold,
	used_at, used_record_id`

// scanApproval reads one row of approvalCols.
func scanApproval(row pgx.Row) (*approval.Approval, error) {
	a := new(approval.Approval)
	var state string
	var created, expires, decided, used int64
	if err := row.Scan(&a.ID, &state, &a.Event, &a.Surface, &a.SessionID, &a.AgentID,
		&a.Tool, &a.Summary, &a.Reason, &a.PolicyID, &created, &expires,
		&a.DecidedBy, &a.DecidedReason, &decided, &a.RecordID, &a.DecisionRecordID,
		&a.Caller, &a.Tenant, &a.Key, &a.Hold, &used, &a.UsedRecordID); err != nil {
		return nil, err
	}
	a.State = approval.ApprovalState(state)
	a.Created, a.Expires = fromUS(created), fromUS(expires)
	a.DecidedAt, a.UsedAt = fromUS(decided), fromUS(used)
	return a, nil
}

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// queryApprovals runs a query returning approvalCols rows and reads them all.
func queryApprovals(ctx context.Context, q querier, query string, args ...any) ([]approval.Approval, error) {
	rows, err := q.Query(ctx, query, args...)
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

// CreateApproval stores a as a new, pending approval. a.State must be
// pending or empty (stored as pending); a.ID must be new.
func (s *Store) CreateApproval(ctx context.Context, a *approval.Approval) error {
	if a == nil || a.ID == "" {
		return errors.New("postgres: approval has no id")
	}
	if a.State != "" && a.State != approval.ApprovalPending {
		return fmt.Errorf("postgres: new approval %q has state %q, want pending", a.ID, a.State)
	}
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	const what = "create approval"
	return s.stateTx(ctx, what, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO approvals (`+approvalCols+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)`,
			pgArgs(a.ID, string(approval.ApprovalPending), a.Event, a.Surface, a.SessionID, a.AgentID,
				a.Tool, a.Summary, a.Reason, a.PolicyID, toUS(a.Created), toUS(a.Expires),
				a.DecidedBy, a.DecidedReason, toUS(a.DecidedAt), a.RecordID, a.DecisionRecordID,
				a.Caller, a.Tenant, a.Key, a.Hold, toUS(a.UsedAt), a.UsedRecordID)...)
		if isUnique(err) {
			return fmt.Errorf("postgres: approval %q exists already", a.ID)
		}
		if err == nil {
			err = s.notifyApprovals(ctx, tx, a.ID)
		}
		if err != nil {
			return stateErr(ctx, what, err)
		}
		return nil
	})
}

// Approval returns the approval with id, or approval.ErrApprovalNotFound.
func (s *Store) Approval(ctx context.Context, id string) (*approval.Approval, error) {
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	a, err := scanApproval(s.statePool().QueryRow(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = $1`, pgArgs(id)...))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: %q", approval.ErrApprovalNotFound, id)
	}
	if err != nil {
		return nil, stateErr(ctx, "read approval", err)
	}
	return a, nil
}

// ListApprovals returns the approvals q selects, newest first: by Created,
// then by id, both descending. q.After continues after that approval in
// this order (it need not match q's filters); an id the store does not hold
// is audit.ErrUnknownCursor. q.Limit <= 0 means 100; more than 1000 means
// 1000. The slice is never nil.
func (s *Store) ListApprovals(ctx context.Context, q approval.ApprovalQuery) ([]approval.Approval, error) {
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	limit := q.EffectiveLimit()
	var conds []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	for _, f := range []struct{ col, v string }{
		{"state", string(q.State)}, {"tenant", q.Tenant}, {"session_id", q.Session},
	} {
		if f.v != "" {
			conds = append(conds, f.col+" = "+arg(f.v))
		}
	}
	if q.After != "" {
		var created int64
		err := s.statePool().QueryRow(ctx, `SELECT created FROM approvals WHERE id = $1`, pgArgs(q.After)...).Scan(&created)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("postgres: %w: %q", audit.ErrUnknownCursor, q.After)
		}
		if err != nil {
			return nil, stateErr(ctx, "find approval cursor", err)
		}
		conds = append(conds, "(created, id) < ("+arg(created)+", "+arg(q.After)+")")
	}
	query := `SELECT ` + approvalCols + ` FROM approvals`
	if len(conds) > 0 {
		query += " WHERE " + strings.Join(conds, " AND ")
	}
	query += " ORDER BY created DESC, id DESC LIMIT " + arg(limit)
	out, err := queryApprovals(ctx, s.statePool(), query, pgArgs(args...)...)
	if err != nil {
		return nil, stateErr(ctx, "list approvals", err)
	}
	return out, nil
}

// DecideApproval moves the pending approval id to state with by, reason
// and at, and returns it as stored (see approval.ApprovalStore). It is one
// compare-and-set: the row changes only while it is pending and, to approve
// or deny, while its Expires is not before at. Of two replicas deciding at
// once, the second waits for the first's row lock and then finds the row
// decided: approval.ErrApprovalDecided, with the approval as the first stored
// it. An approve or deny after Expires expires the approval instead, in the
// same transaction, and is approval.ErrApprovalDecided.
func (s *Store) DecideApproval(ctx context.Context, id string, state approval.ApprovalState, by, reason string, at time.Time) (*approval.Approval, error) {
	switch state {
	case approval.ApprovalApproved, approval.ApprovalDenied, approval.ApprovalExpired:
	default:
		return nil, fmt.Errorf("postgres: cannot decide approval %q to state %q", id, state)
	}
	if at.IsZero() {
		return nil, fmt.Errorf("postgres: decide approval %q: no time", id)
	}
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	const what = "decide approval"
	var got *approval.Approval
	var outErr error
	err := s.stateTx(ctx, what, func(tx pgx.Tx) error {
		const set = `UPDATE approvals SET state = $1, decided_by = $2, decided_reason = $3, decided_at = $4
			WHERE id = $5 AND state = 'pending'`
		args := []any{string(state), by, reason, toUS(at), id}
		query := set
		if state != approval.ApprovalExpired {
			query += ` AND expires >= $6` // Expires is not before at
			args = append(args, ceilUS(at))
		}
		rows, err := queryApprovals(ctx, tx, query+` RETURNING `+approvalCols, pgArgs(args...)...)
		if err != nil {
			return stateErr(ctx, what, err)
		}
		if len(rows) == 0 && state != approval.ApprovalExpired {
			// Not pending, unknown, or overdue: a row still pending now is
			// overdue (Expires never changes), so expire it.
			outErr = approval.ErrApprovalDecided
			rows, err = queryApprovals(ctx, tx, set+` RETURNING `+approvalCols,
				pgArgs(string(approval.ApprovalExpired), "", warden.CodeApprovalTimeout, toUS(at), id)...)
			if err != nil {
				return stateErr(ctx, what, err)
			}
		}
		if len(rows) == 1 {
			got = &rows[0]
			if err := s.notifyApprovals(ctx, tx, id); err != nil {
				return stateErr(ctx, what, err)
			}
			return nil
		}
		outErr = approval.ErrApprovalDecided
		got, err = scanApproval(tx.QueryRow(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = $1`, pgArgs(id)...))
		if errors.Is(err, pgx.ErrNoRows) {
			got, outErr = nil, approval.ErrApprovalNotFound
			return nil
		}
		if err != nil {
			return stateErr(ctx, what, err)
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
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	if err := s.writable(); err != nil {
		return err
	}
	tag, err := s.statePool().Exec(ctx, `UPDATE approvals SET decision_record_id = $1 WHERE id = $2`, pgArgs(recordID, id)...)
	if err != nil {
		return stateErr(ctx, "set decision record", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: %q", approval.ErrApprovalNotFound, id)
	}
	return nil
}

// UseApproval marks used, at `at` by the record recordID, the approved,
// unused approval with key whose DecidedAt is at or after notBefore (the
// earliest decided, if several are), and returns it; none, or an empty key,
// is (nil, nil). It picks the earliest candidate, then claims it with an
// UPDATE that re-checks used_at = 0: of concurrent retries on any replicas
// exactly one claims a given approval, and one that lost the claim picks
// again (the next candidate, or none).
func (s *Store) UseApproval(ctx context.Context, key string, notBefore, at time.Time, recordID string) (*approval.Approval, error) {
	if at.IsZero() {
		return nil, errors.New("postgres: use approval: no time")
	}
	if key == "" {
		return nil, nil
	}
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	if err := s.writable(); err != nil {
		return nil, err
	}
	const what = "use approval"
	pool := s.statePool()
	for range useAttempts {
		var id string
		err := pool.QueryRow(ctx, `SELECT id FROM approvals
			WHERE key = $1 AND state = 'approved' AND used_at = 0 AND decided_at >= $2
			ORDER BY decided_at, id LIMIT 1`, pgArgs(key, ceilUS(notBefore))...).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, nil
		}
		if err != nil {
			return nil, stateErr(ctx, what, err)
		}
		rows, err := queryApprovals(ctx, pool, `UPDATE approvals SET used_at = $1, used_record_id = $2
			WHERE id = $3 AND state = 'approved' AND used_at = 0
			RETURNING `+approvalCols, pgArgs(toUS(at), recordID, id)...)
		if err != nil {
			return nil, stateErr(ctx, what, err)
		}
		if len(rows) == 1 {
			return &rows[0], nil
		}
	}
	return nil, fmt.Errorf("postgres: %s: key %q: still contended after %d attempts", what, key, useAttempts)
}

// ExpireApprovals moves every pending approval whose Expires is before at
// to expired (DecidedAt at, DecidedReason "approval_timeout", no DecidedBy)
// in one statement, and returns them, oldest Created first (then by id).
// Replicas sweeping at once each get a disjoint share: a row expired by one
// no longer matches for the other.
func (s *Store) ExpireApprovals(ctx context.Context, at time.Time) ([]approval.Approval, error) {
	if at.IsZero() {
		return nil, errors.New("postgres: expire approvals: no time")
	}
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	const what = "expire approvals"
	var out []approval.Approval
	err := s.stateTx(ctx, what, func(tx pgx.Tx) error {
		var err error
		out, err = queryApprovals(ctx, tx, `WITH x AS (
				UPDATE approvals SET state = 'expired', decided_by = '', decided_reason = $1, decided_at = $2
				WHERE state = 'pending' AND expires < $3
				RETURNING `+approvalCols+`)
			SELECT * FROM x ORDER BY created, id`,
			pgArgs(warden.CodeApprovalTimeout, toUS(at), ceilUS(at))...)
		if err != nil {
			return stateErr(ctx, what, err)
		}
		ids := make([]string, len(out))
		for i := range out {
			ids[i] = out[i].ID
		}
		if err := s.notifyApprovals(ctx, tx, ids...); err != nil {
			return stateErr(ctx, what, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
