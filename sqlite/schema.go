package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// Indexes are few on purpose: every commit rewrites the partly filled
// rightmost leaf page of the table and of each index, in the WAL and again at
// checkpoint, and inserting into an index costs the writer CPU on the
// decision path (measured with BenchmarkWriterBatch: each index on an
// unsorted column adds ~2 µs to the writer's ~7 µs per record). Scan
// (read.go) follows insertion order, the rowid, so it needs no sort; it
// finds its cursor with runs_id and a session's records with runs_session,
// (session_id, rowid) in effect; every other filter, Since and Until
// included, is applied while scanning rowids.
//
// migrations[i] takes the schema from version i to version i+1. The schema
// version is kept in PRAGMA user_version; append to this list, never edit an
// entry that has shipped.
var migrations = []migration{
	// 0 → 1: the runs table.
	sqlStep(`CREATE TABLE runs (
		id             TEXT NOT NULL,    -- a UUIDv7 made by warden
		time           INTEGER NOT NULL, -- unix microseconds, UTC
		event          TEXT NOT NULL,
		surface        TEXT NOT NULL,
		direction      TEXT NOT NULL,
		request_id     TEXT NOT NULL,
		agent_id       TEXT NOT NULL,
		session_id     TEXT NOT NULL,
		turn_id        TEXT NOT NULL,
		step_id        TEXT NOT NULL,
		decision       TEXT NOT NULL,
		reason         TEXT NOT NULL,
		reason_codes   TEXT,             -- JSON array, NULL when empty
		policy_id      TEXT NOT NULL,
		policy_version TEXT NOT NULL,
		latency_us     INTEGER NOT NULL,
		-- results (JSON array of warden.Result), input (raw JSON as
		-- received) and output (raw JSON, empty unless modified) are stored
		-- back to back in trace.blobs at blob_off (see blobs.go).
		blob_off       INTEGER NOT NULL,
		results_len    INTEGER NOT NULL,
		input_len      INTEGER NOT NULL,
		output_len     INTEGER NOT NULL
	);
	CREATE INDEX runs_time ON runs (time);
	CREATE INDEX runs_session_time ON runs (session_id, time);`),
	// 1 → 2: what replay needs, and the indexes of a cursor scan.
	migrateCursor,
	// 2 → 3: who asked (the authenticated principal) and its tenant; ''
	// in older rows and on a server without auth.
	sqlStep(`ALTER TABLE runs ADD COLUMN caller TEXT NOT NULL DEFAULT '';
		ALTER TABLE runs ADD COLUMN tenant TEXT NOT NULL DEFAULT '';`),
	// 3 → 4: approvals (docs/approvals.md), one row per approval.Approval,
	// written in plain transactions (approvals.go), not by the record
	// writer. Approvals are few (a human decides each), so their indexes
	// cost nothing on the decision path; each serves one lookup:
	//   - approvals_id: Approval, every state change, the ListApprovals
	//     cursor (ids are unique);
	//   - approvals_state_expires: ExpireApprovals (state = 'pending' AND
	//     expires < ?) and the listing of one state (the pending list);
	//   - approvals_key: UseApproval. Partial: it holds only the approved,
	//     unused approvals, the only ones a retry can use, so it stays tiny
	//     (the query repeats the index's WHERE terms so SQLite can use it);
	//   - approvals_session: a session's timeline (session_id, newest first
	//     by created).
	// Listing without a state or session reads the whole table and sorts
	// it, which is cheap at the size retention keeps it (prune.go).
	sqlStep(`CREATE TABLE approvals (
		id                 TEXT NOT NULL,    -- made by warden
		state              TEXT NOT NULL,    -- pending|approved|denied|expired
		event              TEXT NOT NULL,
		surface            TEXT NOT NULL,
		session_id         TEXT NOT NULL,
		agent_id           TEXT NOT NULL,
		tool               TEXT NOT NULL,
		summary            TEXT NOT NULL,
		reason             TEXT NOT NULL,
		policy_id          TEXT NOT NULL,
		created            INTEGER NOT NULL, -- unix microseconds, UTC (0: none)
		expires            INTEGER NOT NULL, -- unix microseconds, UTC (0: none)
		decided_by         TEXT NOT NULL,
		decided_reason     TEXT NOT NULL,
		decided_at         INTEGER NOT NULL, -- unix microseconds, UTC; 0 while pending
		record_id          TEXT NOT NULL,
		decision_record_id TEXT NOT NULL,
		caller             TEXT NOT NULL,
		tenant             TEXT NOT NULL,
		key                TEXT NOT NULL,    -- the retry key (approval.Approval.Key)
		hold               INTEGER NOT NULL, -- 1: the asking surface holds the call
		used_at            INTEGER NOT NULL, -- unix microseconds, UTC; 0 until used
		used_record_id     TEXT NOT NULL
	);
	CREATE UNIQUE INDEX approvals_id ON approvals (id);
	CREATE INDEX approvals_state_expires ON approvals (state, expires);
	CREATE INDEX approvals_key ON approvals (key, decided_at) WHERE state = 'approved' AND used_at = 0;
	CREATE INDEX approvals_session ON approvals (session_id, created);`),
	// 4 → 5: the approval a record names (audit.Record.ApprovalID: the one
	// an ask created, a retry used, or whose own decision it is); '' in
	// older rows. No index: an approval names its records (record_id,
	// decision_record_id, used_record_id), so the trace never looks up by it.
	sqlStep(`ALTER TABLE runs ADD COLUMN approval_id TEXT NOT NULL DEFAULT '';`),
	// 5 → 6: the tool the step calls (audit.Record.Tool), a column so
	// that Query.Tool reads no blob; '' in older rows (their tool is in
	// their views, which are not parsed back: Query.Tool does not find
	// them).
	sqlStep(`ALTER TABLE runs ADD COLUMN tool TEXT NOT NULL DEFAULT '';`),
	// 6 → 7: the hash chain (hash.go, verify.go): each row's prev_hash and
	// hash, '' in older rows (verify skips them and says how many), and
	// the signed checkpoints retention writes when it deletes the oldest
	// records (prune.go), so the chain stays verifiable from the newest
	// one. (The ACS tables, from another branch, came second: 7 → 8.)
	// The hashes are 32-byte BLOBs, not hex: 64 bytes less per row for
	// the writer to insert (audit.Record gives them in hex).
	sqlStep(`ALTER TABLE runs ADD COLUMN prev_hash BLOB NOT NULL DEFAULT x'';
		ALTER TABLE runs ADD COLUMN hash BLOB NOT NULL DEFAULT x'';
		CREATE TABLE trace_checkpoints (
			time       INTEGER NOT NULL, -- unix microseconds, UTC
			last_rowid INTEGER NOT NULL, -- the last deleted record's rowid
			last_id    TEXT NOT NULL,    -- its id
			last_hash  TEXT NOT NULL,    -- its hash, hex: the next record's prev_hash
			deleted    INTEGER NOT NULL, -- records deleted since the previous checkpoint
			public_key TEXT NOT NULL,    -- hex Ed25519 public key
			signature  TEXT NOT NULL     -- hex Ed25519 signature (prune.go: checkpointMessage)
		);`),
	// 7 → 8: ACS sessions (acsstate.Store, docs/acs.md; acs.go),
	// written in plain transactions like the approvals, not by the record
	// writer. WITHOUT ROWID: each table is looked up only by its primary
	// key, so its rows live in that b-tree and need no second one.
	//   - acs_sessions: one row per session, its handshake and chain head;
	//   - acs_entries: each session's audit chain, (session, seq) with seq
	//     counting from 1, so ACSEntries pages with seq > after;
	//   - acs_requests: the replay window, (session, key) for the replay
	//     check; acs_requests_at, (session, at), lets RememberRequest
	//     delete the session's expired keys with one range seek.
	sqlStep(`CREATE TABLE acs_sessions (
		id        TEXT NOT NULL PRIMARY KEY, -- metadata.session_id
		agent_id  TEXT NOT NULL,
		tenant    TEXT NOT NULL,
		key_id    TEXT NOT NULL,    -- the handshake's signature key ('': unsigned)
		version   TEXT NOT NULL,    -- the negotiated acs_version
		methods   TEXT NOT NULL,    -- JSON array of strings
		hello     INTEGER NOT NULL, -- unix microseconds, UTC (0: none)
		last_seen INTEGER NOT NULL, -- unix microseconds, UTC (0: none)
		head      TEXT NOT NULL,    -- the newest entry's entry_hash ('': none)
		entries   INTEGER NOT NULL, -- entries in the chain (the newest one's seq)
		ended     INTEGER NOT NULL, -- 1: ended
		ended_at  INTEGER NOT NULL  -- unix microseconds of the first EndACSSession (0: none)
	) WITHOUT ROWID;
	CREATE TABLE acs_entries (
		session       TEXT NOT NULL,
		seq           INTEGER NOT NULL, -- 1, 2, ... in chain order
		entry_id      TEXT NOT NULL,
		step_id       TEXT NOT NULL,
		step_type     TEXT NOT NULL,
		request_hash  TEXT NOT NULL,
		timestamp     INTEGER NOT NULL, -- unix microseconds, UTC (0: none)
		previous_hash TEXT NOT NULL,
		entry_hash    TEXT NOT NULL,
		decision      TEXT NOT NULL,
		record_id     TEXT NOT NULL,
		PRIMARY KEY (session, seq)
	) WITHOUT ROWID;
	CREATE TABLE acs_requests (
		session TEXT NOT NULL,
		key     TEXT NOT NULL,    -- a request_id, or "nonce:" + a nonce
		at      INTEGER NOT NULL, -- unix microseconds, UTC
		PRIMARY KEY (session, key)
	) WITHOUT ROWID;
	CREATE INDEX acs_requests_at ON acs_requests (session, at);`),
	// 8 → 9: the verdict of the shadow set the step was decided beside
	// (audit.Record.ShadowDecision: its summary result's decision), a
	// column so that Query.ShadowDisagrees (shadow <> '' AND shadow <>
	// decision) reads no blob; '' in older rows and without a shadow set.
	// It is derived from the results, which the hash chain covers, so it
	// is not hashed itself. No index, like every filter but the session.
	sqlStep(`ALTER TABLE runs ADD COLUMN shadow TEXT NOT NULL DEFAULT '';`),
	// 9 → 10: the AgBOM of each agent and the MCP tool pins (agbom.go,
	// agbom.Store): one row per component, its canonical JSON in
	// doc; one row per pinned tool of an MCP server.
	sqlStep(`CREATE TABLE agbom_components (
		tenant  TEXT NOT NULL,
		agent   TEXT NOT NULL,
		id      TEXT NOT NULL,
		type    TEXT NOT NULL,
		source  TEXT NOT NULL,    -- acs, mcp or a2a
		doc     TEXT NOT NULL,    -- the canonical component, JSON
		updated INTEGER NOT NULL, -- unix microseconds, UTC (0: none)
		PRIMARY KEY (tenant, agent, id)
	) WITHOUT ROWID;
	CREATE TABLE mcp_tool_pins (
		server       TEXT NOT NULL,
		name         TEXT NOT NULL,
		description  TEXT NOT NULL,
		input_schema TEXT NOT NULL, -- JSON ('' for none)
		hash         TEXT NOT NULL, -- hex SHA-256 of the JCS form
		pinned       INTEGER NOT NULL,
		PRIMARY KEY (server, name)
	) WITHOUT ROWID;`),
	// 10 → 11: session labels (labels.go, labels.Store), one row per
	// (tenant, session, label), written in plain transactions like the
	// approvals; the primary key is the one lookup (a session's labels).
	// And the profiles each ACS session's ClientHello declared
	// (acsstate.Session.Profiles, JSON array; '[]' in older rows).
	sqlStep(`CREATE TABLE session_labels (
		tenant  TEXT NOT NULL,
		session TEXT NOT NULL,
		label   TEXT NOT NULL,
		added   INTEGER NOT NULL, -- unix microseconds, UTC
		PRIMARY KEY (tenant, session, label)
	) WITHOUT ROWID;
	ALTER TABLE acs_sessions ADD COLUMN profiles TEXT NOT NULL DEFAULT '[]';`),
	// 11 → 12: the algorithm of each retention checkpoint's signature
	// (verify.go, Checkpoint.Algorithm): "ed25519" for the older ones and
	// the data directory's key, "ml-dsa-65" or "slh-dsa-128s" with
	// acs.signing_key (Retention.SigningKey).
	sqlStep(`ALTER TABLE trace_checkpoints ADD COLUMN algorithm TEXT NOT NULL DEFAULT 'ed25519';`),
	// 12 → 13: the fleet (fleet.go): the decision stream's acknowledged
	// position, one row per cursor name (audit.CursorStore), and the
	// replica registry, one row per instance (registry.Store).
	sqlStep(`CREATE TABLE stream_cursors (
		name    TEXT NOT NULL PRIMARY KEY,
		id      TEXT NOT NULL,    -- the last record acknowledged
		updated INTEGER NOT NULL  -- unix microseconds, UTC
	) WITHOUT ROWID;
	CREATE TABLE instances (
		id              TEXT NOT NULL PRIMARY KEY,
		addr            TEXT NOT NULL,
		version         TEXT NOT NULL,
		policy_revision TEXT NOT NULL,
		started         INTEGER NOT NULL, -- unix microseconds, UTC
		last_seen       INTEGER NOT NULL  -- unix microseconds, UTC
	) WITHOUT ROWID;`),
	// 13 → 14: the trace log (logged.go, Options.Log): the sequence number
	// of the last log record whose row is in runs, moved in the
	// transaction that inserts the rows, so that a restart indexes the
	// log's records after it and no other. One row; 0 while no log was
	// used.
	sqlStep(`CREATE TABLE trace_log (
		one     INTEGER NOT NULL PRIMARY KEY CHECK (one = 1),
		indexed INTEGER NOT NULL
	);
	INSERT INTO trace_log (one, indexed) VALUES (1, 0);`),
	// 14 → 15: the chain marker (chainkey.go, internal/tracehash): where
	// the records keyed with the chain key start, how many unhashed
	// records the trace may start with, the key's id and a MAC over them
	// with the key. One row, written by the first Open with the key.
	sqlStep(`CREATE TABLE trace_chain (
		one         INTEGER NOT NULL PRIMARY KEY CHECK (one = 1),
		version     INTEGER NOT NULL,
		anchor_pos  INTEGER NOT NULL, -- rowid of the head when the key was first used (0: none)
		anchor_hash BLOB NOT NULL,    -- its hash (x'': none)
		legacy      INTEGER NOT NULL, -- unhashed records the trace may start with
		key_id      TEXT NOT NULL,
		mac         BLOB NOT NULL
	);`),
	// 15 → 16: the sealing keys (sealkeys.go, seal.KeyStore): one row per
	// key ever stored, wrapped; a destroyed key keeps its row (the
	// tombstone) with wrapped NULL. seal_keys_live holds a reference to
	// one live key (first writer wins) and is the lookup of Live and Add.
	sqlStep(`CREATE TABLE seal_keys (
		tenant    TEXT NOT NULL,
		period    TEXT NOT NULL,
		session   TEXT NOT NULL,    -- '' for a period DEK
		kind      INTEGER NOT NULL, -- seal.Kind: 1 DEK, 2 session key
		id        BLOB NOT NULL,    -- seal.KeyID
		parent    BLOB NOT NULL,    -- a session key's DEK id (zeros for a DEK)
		kek       TEXT NOT NULL,    -- a DEK's KEK id ('' for a session key)
		wrapped   BLOB,             -- NULL once destroyed
		created   INTEGER NOT NULL, -- unix microseconds, UTC
		destroyed INTEGER,          -- unix microseconds, UTC; NULL while live
		PRIMARY KEY (tenant, period, session, kind, id)
	) WITHOUT ROWID;
	CREATE UNIQUE INDEX seal_keys_live ON seal_keys (tenant, period, session, kind) WHERE destroyed IS NULL;`),
	// 16 → 17: the sealed originals of the values the redaction replaced
	// (audit.Record.Sealed: a JSON object from mark to envelope), NULL
	// when there are none, as in every older row. A column, not a part of
	// the row's blob, so that a record without them costs nothing (no
	// length column, no bytes) and one with them a few hundred bytes in
	// its row. BLOB, not TEXT: the hash chain covers these bytes
	// (tracehash.Row.Sealed), and SQLite never converts a BLOB's encoding
	// or reads it as a number. No index: nothing looks records up by it.
	sqlStep(`ALTER TABLE runs ADD COLUMN sealed BLOB;`),
}

// migrateCursor adds the policy revision and the views (stored after the
// output in trace.blobs, views_len bytes; 0 in older rows), and trades the
// time indexes for the two a rowid-ordered Scan uses.
func migrateCursor(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `
		ALTER TABLE runs ADD COLUMN policy_revision TEXT NOT NULL DEFAULT '';
		ALTER TABLE runs ADD COLUMN views_len INTEGER NOT NULL DEFAULT 0;
		DROP INDEX IF EXISTS runs_time;
		DROP INDEX IF EXISTS runs_session_time;
		CREATE INDEX runs_session ON runs (session_id);`); err != nil {
		return err
	}
	// Record ids are unique from now on: a duplicate is rejected alone (see
	// write.go). Schema 1 did not enforce it; should an old trace hold a
	// duplicate after all, it keeps a plain index (a cursor naming a
	// duplicate then means the later record) rather than fail to open.
	_, err := tx.ExecContext(ctx, `CREATE UNIQUE INDEX runs_id ON runs (id)`)
	if isConstraint(err) {
		_, err = tx.ExecContext(ctx, `CREATE INDEX runs_id ON runs (id)`)
	}
	return err
}

// A migration changes the schema inside migrate's transaction.
type migration func(ctx context.Context, tx *sql.Tx) error

func sqlStep(q string) migration {
	return func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, q)
		return err
	}
}

// schemaVersion is the version this package writes and reads.
var schemaVersion = len(migrations)

// migrate brings the database to schemaVersion. It runs in one IMMEDIATE
// transaction (the DSN sets _txlock=immediate), so two processes opening the
// same directory cannot both apply a migration.
func migrate(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin migration: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if v > schemaVersion {
		return fmt.Errorf("trace schema version %d is newer than this warden supports (%d)", v, schemaVersion)
	}
	if v == schemaVersion {
		return nil
	}
	for i := v; i < schemaVersion; i++ {
		if err := migrations[i](ctx, tx); err != nil {
			return fmt.Errorf("migrate trace schema %d→%d: %w", i, i+1, err)
		}
	}
	// PRAGMA does not take bound parameters.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return fmt.Errorf("set schema version: %w", err)
	}
	return tx.Commit()
}

// checkVersion reports whether a read-only connection sees the schema this
// package reads.
func checkVersion(ctx context.Context, db *sql.DB) error {
	var v int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	switch {
	case v == 0:
		return fmt.Errorf("not a warden trace (schema version 0)")
	case v > schemaVersion:
		return fmt.Errorf("trace schema version %d is newer than this warden supports (%d)", v, schemaVersion)
	case v < schemaVersion:
		return fmt.Errorf("trace schema version %d is older than this warden's (%d): start the server once to migrate it", v, schemaVersion)
	}
	return nil
}
