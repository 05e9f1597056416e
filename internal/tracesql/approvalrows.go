package tracesql

import (
	"context"
	"strconv"
	"strings"

	"github.com/wardenhq/warden/approval"
)

// ApprovalRows is approval.Rows over DB's approvals table. Each change is
// one INSERT or UPDATE … RETURNING in a transaction of its own, whose WHERE
// is the compare-and-set (PostgreSQL re-checks it on the row version a
// concurrent writer left; SQLite runs it under its write lock). WriteErr is
// Writable's answer; Announce, if set, is told in the transaction of the
// approvals a change adds or decides (PostgreSQL notifies other replicas).
type ApprovalRows struct {
	DB       RowDB
	WriteErr func() error
	Announce func(ctx context.Context, db RowDB, ids []string) error
}

var _ approval.Rows = ApprovalRows{}

// ApprovalCols are the approvals table's columns, as query scans them.
const ApprovalCols = `id, state, event, surface, session_id, agent_id, tool,
	summary, reason, policy_id, created, expires, decided_by, decided_reason,
	decided_at, record_id, decision_record_id, caller, tenant, key, hold,
	used_at, used_record_id`

// query runs q, which returns ApprovalCols, on db; its ? parameters are
// numbered ($n) as RowDB wants them.
func (ApprovalRows) query(ctx context.Context, db RowDB, what, q string, args []any) (out []approval.Approval, err error) {
	parts := strings.Split(q, "?")
	for i := range parts[1:] {
		parts[i+1] = "$" + strconv.Itoa(i+1) + parts[i+1]
	}
	var a approval.Approval
	var created, expires, decided, used int64
	err = db.Query(ctx, what, strings.Join(parts, ""), args, []any{&a.ID, (*string)(&a.State), &a.Event, &a.Surface, &a.SessionID,
		&a.AgentID, &a.Tool, &a.Summary, &a.Reason, &a.PolicyID, &created, &expires, &a.DecidedBy,
		&a.DecidedReason, &decided, &a.RecordID, &a.DecisionRecordID, &a.Caller, &a.Tenant, &a.Key, &a.Hold,
		&used, &a.UsedRecordID}, func() {
		a.Created, a.Expires, a.DecidedAt, a.UsedAt = FromMicro(created), FromMicro(expires), FromMicro(decided), FromMicro(used)
		out = append(out, a)
	})
	return out, err
}

// change runs q in a transaction of its own and announces the approvals it
// returns when announce.
func (r ApprovalRows) change(ctx context.Context, what, q string, args []any, announce bool) (out []approval.Approval, err error) {
	err = r.DB.Tx(ctx, what, func(ctx context.Context, db RowDB) error {
		if out, err = r.query(ctx, db, what, q, args); err != nil || !announce || r.Announce == nil || len(out) == 0 {
			return err
		}
		ids := make([]string, len(out))
		for i, a := range out {
			ids[i] = a.ID
		}
		return r.Announce(ctx, db, ids)
	})
	return out, err
}

// Writable implements approval.Rows.
func (r ApprovalRows) Writable() error { return r.WriteErr() }

// Insert implements approval.Rows.
func (r ApprovalRows) Insert(ctx context.Context, a *approval.Approval) (bool, error) {
	got, err := r.change(ctx, "create approval", `INSERT INTO approvals (`+ApprovalCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING RETURNING `+ApprovalCols, []any{a.ID, string(a.State), a.Event, a.Surface,
		a.SessionID, a.AgentID, a.Tool, a.Summary, a.Reason, a.PolicyID, Micro(a.Created), Micro(a.Expires),
		a.DecidedBy, a.DecidedReason, Micro(a.DecidedAt), a.RecordID, a.DecisionRecordID, a.Caller, a.Tenant,
		a.Key, a.Hold, Micro(a.UsedAt), a.UsedRecordID}, true)
	return len(got) == 1, err
}

// Select implements approval.Rows.
func (r ApprovalRows) Select(ctx context.Context, f approval.Filter, o approval.Order, limit int) ([]approval.Approval, error) {
	w := approvalWhere(f)
	order := map[approval.Order]string{approval.NewestFirst: "created DESC, id DESC", approval.FirstDecided: "decided_at, id"}[o]
	return r.query(ctx, r.DB, "read approvals", `SELECT `+ApprovalCols+` FROM approvals`+w.String()+
		` ORDER BY `+order+` LIMIT ?`, append(w.args, limit))
}

// Update implements approval.Rows.
func (r ApprovalRows) Update(ctx context.Context, f approval.Filter, c approval.Change) ([]approval.Approval, error) {
	set := sqlList{prefix: "UPDATE approvals SET ", sep: ", "}
	set.add(c.State != "", "state = ?, decided_by = ?, decided_reason = ?, decided_at = ?",
		string(c.State), c.DecidedBy, c.DecidedReason, Micro(c.DecidedAt))
	set.add(!c.UsedAt.IsZero(), "used_at = ?, used_record_id = ?", Micro(c.UsedAt), c.UsedRecordID)
	if c.DecisionRecordID != nil {
		set.add(true, "decision_record_id = ?", *c.DecisionRecordID)
	}
	w := approvalWhere(f)
	return r.change(ctx, "change approvals", set.String()+w.String()+` RETURNING `+ApprovalCols,
		append(set.args, w.args...), c.State != "")
}

// approvalWhere is approval.Filter.Match in SQL: f's WHERE clause.
func approvalWhere(f approval.Filter) *sqlList {
	w := &sqlList{prefix: " WHERE ", sep: " AND "}
	w.add(f.ID != "", "id = ?", f.ID)
	w.add(f.Tenant != "", "tenant = ?", f.Tenant)
	w.add(f.Session != "", "session_id = ?", f.Session)
	w.add(f.Key != "", "key = ?", f.Key)
	switch s := f.State; s {
	case approval.ApprovalPending, approval.ApprovalApproved, approval.ApprovalDenied, approval.ApprovalExpired:
		w.add(true, "state = '"+string(s)+"'") // a literal: the partial indexes (WHERE state = …) serve it
	default:
		w.add(s != "", "state = ?", string(s))
	}
	w.add(f.Unused, "used_at = 0")
	w.add(!f.ExpiresBefore.IsZero(), "expires < ?", CeilMicro(f.ExpiresBefore))
	w.add(!f.ExpiresFrom.IsZero(), "expires >= ?", CeilMicro(f.ExpiresFrom))
	w.add(!f.DecidedFrom.IsZero(), "decided_at >= ?", CeilMicro(f.DecidedFrom))
	if f.After != nil {
		w.add(true, "(created, id) < (?, ?)", Micro(f.After.Created), f.After.ID)
	}
	return w
}

// sqlList is a list of SQL parts, joined by sep after prefix, and their
// arguments.
type sqlList struct {
	prefix, sep string
	b           strings.Builder
	args        []any
}

// add adds part, with its arguments, when ok.
func (l *sqlList) add(ok bool, part string, args ...any) {
	if !ok {
		return
	}
	if l.b.Len() == 0 {
		l.b.WriteString(l.prefix)
	} else {
		l.b.WriteString(l.sep)
	}
	l.b.WriteString(part)
	l.args = append(l.args, args...)
}

func (l *sqlList) String() string { return l.b.String() }
