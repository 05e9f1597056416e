package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations[i] takes the schema from version i to version i+1. The version
// is kept in warden_schema (one row). Append to this list, never edit an
// entry that has shipped: P1 owns version 1 (the trace); the shared state
// and the decision stream append after it.
//
// Every statement runs in the current search_path, so one database can hold
// several wardens' schemas (the tests give each test its own).
var migrations = []migration{
	// 0 → 1: the trace (record.go, read.go). One row per audit.Record. seq is the
	// record's place in the single order every replica shares: the writer
	// takes it from trace_head, the one-row chain head locked FOR UPDATE
	// in each batch's transaction, so concurrent writers form one chain
	// (docs/verify.md). The JSON blobs are bytea, not jsonb: the hash chain
	// covers the bytes as received, which jsonb would rewrite. Indexes, as
	// SQLite's: the primary key (scan order and paging), id (the cursor and
	// Query.ID), session (a session's records); every other filter is
	// applied while scanning seq.
	sqlStep(`CREATE TABLE runs (
		seq             bigint NOT NULL PRIMARY KEY,
		id              text NOT NULL,
		time            bigint NOT NULL, -- unix microseconds, UTC
		event           text NOT NULL,
		surface         text NOT NULL,
		direction       text NOT NULL,
		request_id      text NOT NULL,
		agent_id        text NOT NULL,
		session_id      text NOT NULL,
		turn_id         text NOT NULL,
		step_id         text NOT NULL,
		decision        text NOT NULL,
		reason          text NOT NULL,
		reason_codes    bytea,           -- JSON array, NULL when empty
		policy_id       text NOT NULL,
		policy_version  text NOT NULL,
		latency_us      bigint NOT NULL,
		results         bytea NOT NULL,  -- JSON array of warden.Result
		input           bytea NOT NULL,  -- raw JSON as received
		output          bytea NOT NULL,  -- raw JSON, empty unless modified
		policy_revision text NOT NULL,
		views           bytea NOT NULL,  -- JSON object, empty for none
		caller          text NOT NULL,
		tenant          text NOT NULL,
		approval_id     text NOT NULL,
		tool            text NOT NULL,
		shadow          text NOT NULL,   -- the shadow set's verdict ('' for none)
		prev_hash       bytea NOT NULL,  -- 32 bytes, empty for the first record
		hash            bytea NOT NULL   -- 32 bytes
	);
	CREATE UNIQUE INDEX runs_id ON runs (id);
	CREATE INDEX runs_session ON runs (session_id, seq);
	CREATE TABLE trace_head (
		one  boolean NOT NULL PRIMARY KEY DEFAULT true CHECK (one),
		seq  bigint NOT NULL,  -- the newest record's seq (0: none)
		hash bytea NOT NULL    -- its hash (empty: none)
	);
	INSERT INTO trace_head (one, seq, hash) VALUES (true, 0, '\x');`),
	// 1 → 2: the state a fleet shares (approvals.go, acs.go, labels.go,
	// agbom.go), the SQLite store's tables of the same names. Times are
	// unix microseconds, UTC (0: none), as in runs. Every change is a
	// statement or a short transaction that PostgreSQL's row locks make a
	// compare-and-set, so replicas agree (see each file).
	//   - approvals: one row per approval.Approval; approvals_list serves
	//     ListApprovals (newest first) and its cursor, approvals_pending
	//     ExpireApprovals, approvals_key UseApproval (partial: only the
	//     approved, unused ones a retry can use), approvals_session a
	//     session's timeline.
	//   - acs_sessions, acs_entries (each session's chain, seq from 1),
	//     acs_requests (the replay window; acs_requests_at lets
	//     RememberRequest forget a session's expired keys with one seek).
	//   - session_labels: one row per (tenant, session, label).
	//   - agbom_components, mcp_tool_pins: the AgBOM and the MCP tool pins.
	sqlStep(`CREATE TABLE approvals (
		id                 text NOT NULL PRIMARY KEY,
		state              text NOT NULL CHECK (state IN ('pending', 'approved', 'denied', 'expired')),
		event              text NOT NULL,
		surface            text NOT NULL,
		session_id         text NOT NULL,
		agent_id           text NOT NULL,
		tool               text NOT NULL,
		summary            text NOT NULL,
		reason             text NOT NULL,
		policy_id          text NOT NULL,
		created            bigint NOT NULL,
		expires            bigint NOT NULL,
		decided_by         text NOT NULL,
		decided_reason     text NOT NULL,
		decided_at         bigint NOT NULL,
		record_id          text NOT NULL,
		decision_record_id text NOT NULL,
		caller             text NOT NULL,
		tenant             text NOT NULL,
		key                text NOT NULL,
		hold               boolean NOT NULL,
		used_at            bigint NOT NULL,
		used_record_id     text NOT NULL
	);
	CREATE INDEX approvals_list ON approvals (created DESC, id DESC);
	CREATE INDEX approvals_pending ON approvals (expires) WHERE state = 'pending';
	CREATE INDEX approvals_key ON approvals (key, decided_at) WHERE state = 'approved' AND used_at = 0;
	CREATE INDEX approvals_session ON approvals (session_id, created);
	CREATE TABLE acs_sessions (
		id        text NOT NULL PRIMARY KEY, -- metadata.session_id
		agent_id  text NOT NULL,
		tenant    text NOT NULL,
		key_id    text NOT NULL,    -- the handshake's signature key ('': unsigned)
		version   text NOT NULL,    -- the negotiated acs_version
		methods   text[] NOT NULL,
		profiles  text[] NOT NULL,
		hello     bigint NOT NULL,
		last_seen bigint NOT NULL,
		head      text NOT NULL,    -- the newest entry's entry_hash ('': none)
		entries   bigint NOT NULL,  -- entries in the chain (the newest one's seq)
		ended     boolean NOT NULL,
		ended_at  bigint NOT NULL   -- the first EndACSSession (0: none)
	);
	CREATE TABLE acs_entries (
		session       text NOT NULL,
		seq           bigint NOT NULL, -- 1, 2, ... in chain order
		entry_id      text NOT NULL,
		step_id       text NOT NULL,
		step_type     text NOT NULL,
		request_hash  text NOT NULL,
		timestamp     bigint NOT NULL,
		previous_hash text NOT NULL,
		entry_hash    text NOT NULL,
		decision      text NOT NULL,
		record_id     text NOT NULL,
		PRIMARY KEY (session, seq)
	);
	CREATE TABLE acs_requests (
		session text NOT NULL,
		key     text NOT NULL,   -- a request_id, or "nonce:" + a nonce
		at      bigint NOT NULL,
		PRIMARY KEY (session, key)
	);
	CREATE INDEX acs_requests_at ON acs_requests (session, at);
	CREATE TABLE session_labels (
		tenant  text NOT NULL,
		session text NOT NULL,
		label   text NOT NULL,
		added   bigint NOT NULL,
		PRIMARY KEY (tenant, session, label)
	);
	CREATE TABLE agbom_components (
		tenant  text NOT NULL,
		agent   text NOT NULL,
		id      text NOT NULL,
		type    text NOT NULL,
		source  text NOT NULL,   -- acs, mcp or a2a
		doc     text NOT NULL,   -- the canonical component, JSON as given
		updated bigint NOT NULL,
		PRIMARY KEY (tenant, agent, id)
	);
	CREATE TABLE mcp_tool_pins (
		server       text NOT NULL,
		name         text NOT NULL,
		description  text NOT NULL,
		input_schema text NOT NULL, -- JSON ('' for none)
		hash         text NOT NULL, -- hex SHA-256 of the JCS form
		pinned       bigint NOT NULL,
		PRIMARY KEY (server, name)
	);`),
	// 2 → 3: the fleet (fleet.go): the decision stream's
	// acknowledged position, one row per cursor name, and the replica
	// registry, one row per instance. Times are unix microseconds, UTC.
	sqlStep(`CREATE TABLE stream_cursors (
		name    text PRIMARY KEY,
		id      text NOT NULL,   -- the last record acknowledged
		updated bigint NOT NULL
	);
	CREATE TABLE instances (
		id              text PRIMARY KEY,
		addr            text NOT NULL,
		version         text NOT NULL,
		policy_revision text NOT NULL,
		started         bigint NOT NULL,
		last_seen       bigint NOT NULL
	);`),
	// 3 → 4: runs' JSON columns compressed with lz4 instead of pglz, the
	// default. A record is about 3 KB, over TOAST's 2 KB threshold, so
	// PostgreSQL compresses every row it inserts; with pglz that was the
	// largest item (15 %) of the server's CPU profile under
	// bench/compare.sh, and lz4 costs a fraction of it for about the same
	// size (docs/postgres.md). Servers before 14, or built without lz4,
	// keep pglz: the step is then a no-op, not an error.
	sqlStep(`DO $$
	BEGIN
		IF current_setting('server_version_num')::int >= 140000 THEN
			BEGIN
				EXECUTE 'ALTER TABLE runs
					ALTER COLUMN results SET COMPRESSION lz4,
					ALTER COLUMN input SET COMPRESSION lz4,
					ALTER COLUMN output SET COMPRESSION lz4,
					ALTER COLUMN views SET COMPRESSION lz4';
			EXCEPTION WHEN feature_not_supported THEN
				NULL; -- built without lz4
			END;
		END IF;
	END $$`),
	// 4 → 5: a record up to 8 KB stays in its row uncompressed
	// (toast_tuple_target; larger ones are still compressed, with lz4).
	// Measured under bench/compare.sh: the server's CPU per record 15 %
	// lower and warden's decisions/s 7 % higher, for 4.2 KiB a record on
	// disk instead of 2.6 (docs/postgres.md says how to take the other
	// side of that trade: ALTER TABLE runs RESET (toast_tuple_target)).
	sqlStep(`ALTER TABLE runs SET (toast_tuple_target = 8160)`),
	// 5 → 6: the chain marker (chainkey.go, internal/tracehash): the seq
	// and hash of the chain's head when the chain key was first used (the
	// records after it are keyed), the key's id and a MAC over them with
	// the key. One row, written by the first Open with the key.
	sqlStep(`CREATE TABLE trace_chain (
		one         boolean NOT NULL PRIMARY KEY DEFAULT true CHECK (one),
		version     bigint NOT NULL,
		anchor_pos  bigint NOT NULL, -- seq of the head when the key was first used (0: none)
		anchor_hash bytea NOT NULL,  -- its hash (empty: none)
		legacy      bigint NOT NULL, -- always 0: every PostgreSQL record is hashed
		key_id      text NOT NULL,
		mac         bytea NOT NULL
	)`),
	// 6 → 7: the sealing keys (sealkeys.go, seal.KeyStore), as SQLite's:
	// one row per key ever stored, wrapped; a destroyed key keeps its row
	// (the tombstone) with wrapped NULL. seal_keys_live holds a reference
	// to one live key (first writer wins, across replicas) and is the
	// lookup of Live and Add.
	sqlStep(`CREATE TABLE seal_keys (
		tenant    text NOT NULL,
		period    text NOT NULL,
		session   text NOT NULL,     -- '' for a period DEK
		kind      smallint NOT NULL, -- seal.Kind: 1 DEK, 2 session key
		id        bytea NOT NULL,    -- seal.KeyID
		parent    bytea NOT NULL,    -- a session key's DEK id (zeros for a DEK)
		kek       text NOT NULL,     -- a DEK's KEK id ('' for a session key)
		wrapped   bytea,             -- NULL once destroyed
		created   bigint NOT NULL,   -- unix microseconds, UTC
		destroyed bigint,            -- unix microseconds, UTC; NULL while live
		PRIMARY KEY (tenant, period, session, kind, id)
	);
	CREATE UNIQUE INDEX seal_keys_live ON seal_keys (tenant, period, session, kind) WHERE destroyed IS NULL`),
	// 7 → 8: the sealed originals of the values the redaction replaced
	// (audit.Record.Sealed: a JSON object from mark to envelope), NULL
	// when there are none, as in every older row (adding a NULL column
	// rewrites no row). bytea, as the other JSON columns and for the same
	// reason: the hash chain covers these bytes (tracehash.Row.Sealed),
	// which jsonb would rewrite, and bytea travels as the bytes, without
	// text's encoding checks and conversions (client_encoding).
	sqlStep(`ALTER TABLE runs ADD COLUMN sealed bytea`),
}

// A migration changes the schema inside migrate's transaction.
type migration func(ctx context.Context, tx pgx.Tx) error

func sqlStep(q string) migration {
	return func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, q)
		return err
	}
}

// SchemaVersion is the schema version this package writes and reads.
var SchemaVersion = len(migrations)

// migrateLockKey is the pg_advisory_xact_lock key migrations hold: "warden"
// in ASCII, so that two replicas starting together apply them one after
// the other.
const migrateLockKey int64 = 0x77617264656e

// ErrSchemaTooNew is wrapped by the error of a database whose schema is
// newer than this binary knows.
var ErrSchemaTooNew = errors.New("postgres: schema is newer than this warden supports")

// SchemaTooNewError reports a database whose schema version is newer than
// this binary's.
type SchemaTooNewError struct {
	Have, Known int
}

func (e *SchemaTooNewError) Error() string {
	return fmt.Sprintf("postgres: schema version %d is newer than this warden supports (%d): upgrade warden", e.Have, e.Known)
}

// Unwrap makes errors.Is(err, ErrSchemaTooNew) hold.
func (e *SchemaTooNewError) Unwrap() error { return ErrSchemaTooNew }

// Migrate brings the database pool's schema to SchemaVersion, in one
// transaction holding pg_advisory_xact_lock(migrateLockKey), and returns the
// version it found. A database already at SchemaVersion is left alone; a
// newer one fails with a *SchemaTooNewError.
func Migrate(ctx context.Context, pool *pgxpool.Pool) (from int, err error) {
	return migrateTo(ctx, pool, migrations)
}

func migrateTo(ctx context.Context, pool *pgxpool.Pool, steps []migration) (int, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("postgres: begin migration: %w", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // no-op after Commit
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLockKey); err != nil {
		return 0, fmt.Errorf("postgres: migration lock: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS warden_schema (
		one     boolean NOT NULL PRIMARY KEY DEFAULT true CHECK (one),
		version integer NOT NULL)`); err != nil {
		return 0, fmt.Errorf("postgres: create warden_schema: %w", err)
	}
	var v int
	err = tx.QueryRow(ctx, `SELECT version FROM warden_schema`).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		v = 0
	} else if err != nil {
		return 0, fmt.Errorf("postgres: read schema version: %w", err)
	}
	known := len(steps)
	if v > known {
		return v, &SchemaTooNewError{Have: v, Known: known}
	}
	if v == known {
		return v, tx.Commit(ctx)
	}
	for i := v; i < known; i++ {
		if err := steps[i](ctx, tx); err != nil {
			return v, fmt.Errorf("postgres: migrate schema %d→%d: %w", i, i+1, err)
		}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO warden_schema (one, version) VALUES (true, $1)
		ON CONFLICT (one) DO UPDATE SET version = EXCLUDED.version`, known); err != nil {
		return v, fmt.Errorf("postgres: set schema version: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return v, fmt.Errorf("postgres: commit migration: %w", err)
	}
	return v, nil
}

// checkVersion reports whether the database holds the schema this package
// reads (for a store opened without migrating).
func checkVersion(ctx context.Context, pool *pgxpool.Pool) error {
	var v int
	err := pool.QueryRow(ctx, `SELECT version FROM warden_schema`).Scan(&v)
	if err != nil {
		return fmt.Errorf("postgres: read schema version (run `warden migrate`?): %w", err)
	}
	switch {
	case v > SchemaVersion:
		return &SchemaTooNewError{Have: v, Known: SchemaVersion}
	case v < SchemaVersion:
		return fmt.Errorf("postgres: schema version %d is older than this warden's (%d): run `warden migrate`", v, SchemaVersion)
	}
	return nil
}

// MigrateURL connects to the database url names, applies the migrations
// (Migrate) and returns the version it found. `warden migrate` runs it.
func MigrateURL(ctx context.Context, url string) (from int, err error) {
	if !IsURL(url) {
		return 0, fmt.Errorf("postgres: %q is not a postgres:// URL", redactURL(url))
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return 0, fmt.Errorf("postgres: parse store URL %s: invalid", redactURL(url))
	}
	cfg.MaxConns = 1
	cfg.ConnConfig.ConnectTimeout = DefaultTimeout
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return 0, fmt.Errorf("postgres: %w", err)
	}
	defer pool.Close()
	return Migrate(ctx, pool)
}
