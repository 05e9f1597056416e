package tracesql

import (
	"strings"
	"time"

	"github.com/wardenhq/warden/acsstate"
)

// # ACS sessions and session labels
//
// The statements of acsstate.Rows and labels.Rows that both SQL stores run
// alike, with PostgreSQL's $n parameters: SQLite numbers parameters the
// same way as ?n (Numbered). Times are unix microseconds, 0 for the zero
// time; ended is a boolean (an integer in SQLite).

// The columns of acsstate.Session (ScanACSSession's order) and of
// acsstate.Entry (ScanACSEntries').
const (
	ACSSessionCols = `id, agent_id, tenant, key_id, version, methods, hello, last_seen, head, entries, ended, profiles`
	ACSEntryCols   = `entry_id, step_id, step_type, request_hash, timestamp, previous_hash, entry_hash, decision, record_id`
)

// The ACS statements.
const (
	// ACSPut: id, agent_id, tenant, key_id, version, methods, hello,
	// last_seen, ended, profiles. A new row's chain is empty; an update
	// keeps it, and never clears ended.
	ACSPut = `INSERT INTO acs_sessions (` + ACSSessionCols + `, ended_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, '', 0, $9, $10, 0)
		ON CONFLICT (id) DO UPDATE SET agent_id = excluded.agent_id,
			tenant = excluded.tenant, key_id = excluded.key_id,
			version = excluded.version, methods = excluded.methods,
			hello = excluded.hello, last_seen = excluded.last_seen, profiles = excluded.profiles,
			ended = acs_sessions.ended OR excluded.ended`
	// ACSGet: id.
	ACSGet = `SELECT ` + ACSSessionCols + ` FROM acs_sessions WHERE id = $1`
	// ACSRemember: session, key, at, cutoff; it changes no row when the
	// key is held at or after cutoff.
	ACSRemember = `INSERT INTO acs_requests (session, key, at) VALUES ($1, $2, $3)
		ON CONFLICT (session, key) DO UPDATE SET at = excluded.at WHERE acs_requests.at < $4`
	// ACSAdvance: session, prev, the new head; the compare-and-set of the
	// head, returning the new entry's number.
	ACSAdvance = `UPDATE acs_sessions SET head = $3, entries = entries + 1
		WHERE id = $1 AND head = $2 RETURNING entries`
	// ACSList: session, after, limit.
	ACSList = `SELECT ` + ACSEntryCols + ` FROM acs_entries
		WHERE session = $1 AND seq > $2 ORDER BY seq LIMIT $3`
	// ACSEnd: id, at (kept the first time).
	ACSEnd = `UPDATE acs_sessions SET ended = TRUE,
		ended_at = CASE WHEN ended_at = 0 THEN $2 ELSE ended_at END WHERE id = $1`
)

// The session labels' statements: tenant, session (and label, added).
const (
	LabelsGet = `SELECT label FROM session_labels WHERE tenant = $1 AND session = $2 ORDER BY label`
	LabelsAdd = `INSERT INTO session_labels (tenant, session, label, added) VALUES ($1, $2, $3, $4)`
)

// Numbered returns q with its $n parameters written ?n, for SQLite.
func Numbered(q string) string { return strings.ReplaceAll(q, "$", "?") }

// Rows are the rows of a query: a *sql.Rows or a pgx.Rows.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// ScanACSSession reads a row of ACSSessionCols with scan; list(p) is
// where the driver scans a list column (methods, profiles) to set *p.
func ScanACSSession(scan func(dest ...any) error, list func(p *[]string) any) (*acsstate.Session, error) {
	s := new(acsstate.Session)
	var hello, seen int64
	if err := scan(&s.ID, &s.AgentID, &s.Tenant, &s.KeyID, &s.Version, list(&s.Methods),
		&hello, &seen, &s.Head, &s.Entries, &s.Ended, list(&s.Profiles)); err != nil {
		return nil, err
	}
	s.Hello, s.LastSeen = FromMicro(hello), FromMicro(seen)
	return s, nil
}

// ScanACSEntries reads rows of ACSEntryCols.
func ScanACSEntries(rows Rows) ([]acsstate.Entry, error) {
	var out []acsstate.Entry
	for rows.Next() {
		var e acsstate.Entry
		var ts int64
		if err := rows.Scan(&e.EntryID, &e.StepID, &e.StepType, &e.RequestHash, &ts,
			&e.PreviousHash, &e.EntryHash, &e.Decision, &e.RecordID); err != nil {
			return nil, err
		}
		e.Timestamp = FromMicro(ts)
		out = append(out, e)
	}
	return out, rows.Err()
}

// ScanStrings reads rows of one text column.
func ScanStrings(rows Rows) ([]string, error) {
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Micro is t in unix microseconds, 0 for the zero time.
func Micro(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// FromMicro is the time of a stored Micro(t): UTC, 0 the zero time.
func FromMicro(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}
