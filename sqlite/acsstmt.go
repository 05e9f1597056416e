package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/wardenhq/warden/acsstate"
)

// The ACS methods (acs.go) run prepared statements: database/sql and the
// driver cache none, and parsing each statement anew cost ~110 µs of the
// ~500 µs one ACS step took (BenchmarkACSStep, RememberRequest and
// AppendACSEntry), as much as the commits' writes. Each is prepared once:
// those of RememberRequest and AppendACSEntry on the trace writer's
// connection (writerSQL), the other writes on first use on the approvals'
// connection (adb), the reads on the read-only connections (the session on
// pdb's, pointReader; the entries on rdb's).
// database/sql re-prepares a statement on a connection that replaced a
// closed one by itself.

// The ACS statements, indexes into acsSQL. The writes come first.
const (
	acsPut = iota
	acsForget
	acsRemember
	acsRenew
	acsAdvance
	acsExists
	acsInsert
	acsEnd
	acsGetSession // the reads
	acsGetEntries
	acsStatements // how many
)

// acsSessionCols are the columns of a acsstate.Session, in scanACSSession's
// order; acsEntryCols those of a acsstate.Entry, in scanACSEntry's.
const (
	acsSessionCols = `id, agent_id, tenant, key_id, version, methods, hello, last_seen, head, entries, ended, profiles`
	acsEntryCols   = `entry_id, step_id, step_type, request_hash, timestamp, previous_hash, entry_hash, decision, record_id`
)

// acsSQL are the statements' texts.
var acsSQL = [acsStatements]string{
	acsPut: `INSERT INTO acs_sessions (` + acsSessionCols + `, ended_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, '', 0, ?, ?, 0)
		ON CONFLICT (id) DO UPDATE SET agent_id = excluded.agent_id,
			tenant = excluded.tenant, key_id = excluded.key_id,
			version = excluded.version, methods = excluded.methods,
			hello = excluded.hello, last_seen = excluded.last_seen, profiles = excluded.profiles,
			ended = max(ended, excluded.ended)`,
	acsForget:   `DELETE FROM acs_requests WHERE session = ? AND at < ?`,
	acsRemember: `INSERT INTO acs_requests (session, key, at) VALUES (?, ?, ?) ON CONFLICT (session, key) DO NOTHING`,
	acsRenew:    `UPDATE acs_requests SET at = ? WHERE session = ? AND key = ? AND at < ?`,
	acsAdvance: `UPDATE acs_sessions SET head = ?, entries = entries + 1
		WHERE id = ? AND head = ? RETURNING entries`,
	acsExists: `SELECT 1 FROM acs_sessions WHERE id = ?`,
	acsInsert: `INSERT INTO acs_entries (session, seq, ` + acsEntryCols + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	acsEnd: `UPDATE acs_sessions SET ended = 1,
		ended_at = CASE WHEN ended_at = 0 THEN ? ELSE ended_at END WHERE id = ?`,
	acsGetSession: `SELECT ` + acsSessionCols + ` FROM acs_sessions WHERE id = ?`,
	acsGetEntries: `SELECT ` + acsEntryCols + ` FROM acs_entries
		WHERE session = ? AND seq > ? ORDER BY seq LIMIT ?`,
}

// acsStmts are a store's prepared ACS statements (nil until first used).
type acsStmts struct {
	mu sync.Mutex
	st [acsStatements]*sql.Stmt
}

// acsStmt returns statement i, preparing it on first use.
func (s *Store) acsStmt(i int) (*sql.Stmt, error) {
	s.acs.mu.Lock()
	defer s.acs.mu.Unlock()
	if st := s.acs.st[i]; st != nil {
		return st, nil
	}
	db := s.rdb // ACSEntries: a scan
	switch {
	case i < acsGetSession:
		db = s.adb
	case i == acsGetSession:
		db = s.pointReader()
	}
	st, err := db.PrepareContext(context.Background(), acsSQL[i])
	if err != nil {
		return nil, fmt.Errorf("sqlite: prepare ACS statement %d: %w", i, err)
	}
	s.acs.st[i] = st
	return st, nil
}

// acsTx runs fn in one IMMEDIATE transaction on adb (approvalTx), giving it
// the write statements ids, bound to the transaction. They are prepared
// before it begins: adb has one connection, which the transaction holds.
func (s *Store) acsTx(ctx context.Context, what string, ids []int, fn func(st []*sql.Stmt) error) error {
	if s.adb == nil {
		return ErrReadOnly
	}
	stmts := make([]*sql.Stmt, len(ids))
	s.mu.RLock()
	closed := s.closed
	var err error
	for i := 0; i < len(ids) && !closed && err == nil; i++ {
		stmts[i], err = s.acsStmt(ids[i])
	}
	s.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	if err != nil {
		return err
	}
	return s.approvalTx(ctx, what, func(tx *sql.Tx) error {
		for i, st := range stmts {
			stmts[i] = tx.StmtContext(ctx, st)
		}
		return fn(stmts)
	})
}

// scanACSSession reads one row of acsSessionCols.
func scanACSSession(sc scanner) (*acsstate.Session, error) {
	s := new(acsstate.Session)
	var methods, profiles string
	var hello, seen, ended int64
	if err := sc.Scan(&s.ID, &s.AgentID, &s.Tenant, &s.KeyID, &s.Version, &methods,
		&hello, &seen, &s.Head, &s.Entries, &ended, &profiles); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(profiles), &s.Profiles); err != nil {
		return nil, fmt.Errorf("session %q: profiles: %w", s.ID, err)
	}
	if len(s.Profiles) == 0 {
		s.Profiles = nil
	}
	if err := json.Unmarshal([]byte(methods), &s.Methods); err != nil {
		return nil, fmt.Errorf("session %q: methods: %w", s.ID, err)
	}
	if len(s.Methods) == 0 {
		s.Methods = nil
	}
	s.Hello, s.LastSeen, s.Ended = fromMicro(hello), fromMicro(seen), ended != 0
	return s, nil
}

// scanACSEntry reads one row of acsEntryCols.
func scanACSEntry(sc scanner) (acsstate.Entry, error) {
	var e acsstate.Entry
	var ts int64
	err := sc.Scan(&e.EntryID, &e.StepID, &e.StepType, &e.RequestHash, &ts,
		&e.PreviousHash, &e.EntryHash, &e.Decision, &e.RecordID)
	e.Timestamp = fromMicro(ts)
	return e, err
}
