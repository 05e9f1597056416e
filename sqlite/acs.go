package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/wardenhq/warden/acsstate"
	"github.com/wardenhq/warden/internal/tracesql"
)

// ACS sessions (doc.go) live in acs_sessions, acs_entries and
// acs_requests (schema 8, schema.go); acsstate.Rules holds what they mean,
// and this file moves the rows with the statements PostgreSQL runs too
// (tracesql). A session's creation and end are an IMMEDIATE transaction
// each on the approvals' connection. The two writes of every step,
// Remember and Append, are requests of the trace writer (write.go): run in
// arrival order in the transaction of its batch, beside the records, by
// statements prepared once on its connection (writerSQL): parsing them
// anew was a fifth of a step's cost (BenchmarkACSStep), and a transaction
// each would serialize every step on SQLite's write lock. A refused call writes
// nothing and fails nothing else; two calls in one batch see each other.
// Under the write lock, which other processes sharing the directory take
// too, no two callers record one key or extend one head. An accepted key
// deletes its session's keys that left the window: one range seek on
// acs_requests_at (session, at).

var _ acsstate.Store = (*Store)(nil)

// The statements only SQLite runs (PostgreSQL joins them to the shared ones).
const (
	acsForget = `DELETE FROM acs_requests WHERE session = ? AND at < ?`
	// acsInsert follows tracesql.ACSAdvance: the entry's number is the
	// session's Entries.
	acsInsert = `INSERT INTO acs_entries (session, seq, ` + tracesql.ACSEntryCols + `)
		SELECT id, entries, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10 FROM acs_sessions WHERE id = ?1`
)

// acsRules is the acsstate.Store a Store embeds (newACS).
type acsRules = acsstate.Rules

// acsRows are a Store's ACS rows.
type acsRows Store

func newACS(s *Store) acsRules { return acsstate.Rules{Rows: (*acsRows)(s)} }

func (r *acsRows) PutSession(ctx context.Context, x *acsstate.Session) error {
	methods, _ := json.Marshal(x.Methods) // a []string always marshals
	profiles, _ := json.Marshal(x.Profiles)
	_, err := (*Store)(r).acsWrite(ctx, "put ACS session", tracesql.ACSPut, x.ID, x.AgentID, x.Tenant,
		x.KeyID, x.Version, string(methods), micro(x.Hello), micro(x.LastSeen), x.Ended, string(profiles))
	return err
}

func (r *acsRows) End(ctx context.Context, id string, at time.Time) (bool, error) {
	n, err := (*Store)(r).acsWrite(ctx, "end ACS session", tracesql.ACSEnd, id, micro(at))
	return n > 0, err
}

// acsWrite runs q in an IMMEDIATE transaction of its own on the approvals'
// connection (approvalTx) and returns how many rows it changed.
func (s *Store) acsWrite(ctx context.Context, what, q string, args ...any) (n int64, err error) {
	err = s.approvalTx(ctx, what, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, tracesql.Numbered(q), args...)
		if err == nil {
			n, err = res.RowsAffected()
		}
		if err != nil {
			return s.approvalErr(ctx, what, err)
		}
		return nil
	})
	return n, err
}

// acsStmts holds the session read of every step, prepared on first use on
// the point reads' connections (pointReader).
type acsStmts struct {
	mu  sync.Mutex
	get *sql.Stmt
}

func (r *acsRows) Session(ctx context.Context, id string) (*acsstate.Session, error) {
	s := (*Store)(r)
	s.acs.mu.Lock()
	var err error
	if s.acs.get == nil {
		s.acs.get, err = s.pointReader().PrepareContext(context.Background(), tracesql.Numbered(tracesql.ACSGet))
	}
	st := s.acs.get
	s.acs.mu.Unlock()
	var x *acsstate.Session
	if err == nil {
		x, err = tracesql.ScanACSSession(st.QueryRowContext(ctx, id).Scan, func(p *[]string) any { return jsonList{p} })
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, s.readErr(ctx, "read ACS session", err)
	}
	return x, nil
}

// jsonList scans a JSON array of strings (methods, profiles).
type jsonList struct{ p *[]string }

func (l jsonList) Scan(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("a JSON list is text, not %T", v)
	}
	return json.Unmarshal([]byte(s), l.p)
}

func (r *acsRows) Entries(ctx context.Context, session string, after int64, limit int) ([]acsstate.Entry, error) {
	s := (*Store)(r)
	rows, err := s.rdb.QueryContext(ctx, tracesql.Numbered(tracesql.ACSList), session, after, limit)
	if err == nil {
		defer rows.Close()
		var es []acsstate.Entry
		if es, err = tracesql.ScanACSEntries(rows); err == nil {
			return es, nil
		}
	}
	return nil, s.readErr(ctx, "read ACS entries", err)
}

// acsOp is one Remember or Append, run by the writer; ok is its answer.
type acsOp struct {
	session, key, prev string
	at, cutoff         time.Time       // Remember
	e                  *acsstate.Entry // Append, when set
	ok                 bool
}

func (r *acsRows) Remember(ctx context.Context, session, key string, at, cutoff time.Time) (bool, error) {
	return (*Store)(r).acsDo(ctx, &acsOp{session: session, key: key, at: at, cutoff: cutoff})
}

func (r *acsRows) Append(ctx context.Context, session, prev string, e *acsstate.Entry) (bool, error) {
	return (*Store)(r).acsDo(ctx, &acsOp{session: session, prev: prev, e: e})
}

// acsDo queues op for the writer and returns its answer.
func (s *Store) acsDo(ctx context.Context, op *acsOp) (bool, error) {
	if s.queue == nil || s.adb == nil {
		return false, ErrReadOnly
	}
	req := requestPool.Get().(*request)
	req.op = op
	err := s.submit(ctx, req, "ACS write not stored")
	return op.ok && err == nil, err
}

// runOp runs op in the writer's transaction (a refused op writes nothing);
// an error is the transaction's.
func (s *Store) runOp(ctx context.Context, op *acsOp) (err error) {
	w, e, n := &s.wst, op.e, int64(0)
	if e == nil {
		n, err = execCount(ctx, w.acsRemember, op.session, op.key, op.at.UnixMicro(), op.cutoff.UnixMicro())
		if err == nil && n > 0 {
			_, err = execCount(ctx, w.acsForget, op.session, op.cutoff.UnixMicro())
		}
	} else if n, err = execCount(ctx, w.acsAdvance, op.session, op.prev, e.EntryHash); err == nil && n > 0 {
		_, err = execCount(ctx, w.acsInsert, op.session, e.EntryID, e.StepID, e.StepType,
			e.RequestHash, micro(e.Timestamp), e.PreviousHash, e.EntryHash, e.Decision, e.RecordID)
	}
	if err != nil {
		return fmt.Errorf("sqlite: ACS write: %w", err)
	}
	op.ok = n > 0
	return nil
}

// execCount runs a statement prepared on the writer's connection and
// returns how many rows it changed.
func execCount(ctx context.Context, st driver.Stmt, args ...any) (int64, error) {
	nv := make([]driver.NamedValue, len(args))
	for i, a := range args {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	res, err := st.(driver.StmtExecContext).ExecContext(ctx, nv)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
