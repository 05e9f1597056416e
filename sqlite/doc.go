// Package sqlite is warden's default trace store: one SQLite database,
// DIR/trace.db, written with group commit through the pure-Go
// modernc.org/sqlite driver (no cgo), and beside it DIR/trace.blobs, an
// append-only file with each record's results, input, output and views (see
// BlobFileName for why and how they stay consistent).
//
// # Tables
//
// trace.db holds these tables (schema.go; the version is PRAGMA user_version,
// migrated by [Open]). runs has one small row per recorded decision, the
// columns Scan filters on and where its blob is. approvals (schema 4) has
// one row per [approval.Approval] (docs/approvals.md), every field a column, times
// as unix microseconds in UTC (0 for none), with four small indexes: the id,
// (state, expires) for expiry and the pending list, the retry key (partial:
// approved and unused only), and (session_id, created) for a session's
// timeline. trace_checkpoints (schema 7) holds the signed checkpoints
// retention writes so that the hash chain of the runs (hash.go,
// [Store.Verify]) stays verifiable after the oldest records are deleted.
// acs_sessions, acs_entries and acs_requests (schema 8) keep the ACS
// sessions: their handshake, their audit chains and their replay windows.
//
// # Writing
//
// [Store.Record] encodes the record on the caller's goroutine, puts it on a
// bounded queue and waits. A single writer goroutine gathers queued records
// (up to [Options.MaxBatch], yielding briefly while more keep arriving),
// appends their blobs with one write, inserts their rows with one prepared
// statement in ONE transaction, commits, and only then answers every waiter
// of the batch with the commit's result. Concurrent decisions therefore share
// one commit (group commit) and Record returns nil only for a record whose
// transaction has committed.
//
// # The trace log
//
// With [Options.Log] (`warden serve --trace-log`, experimental) a record's
// durable point is its append to a segment log, DIR/trace.log, and its row
// is inserted behind the answer, in larger transactions; see logged.go.
//
// # Durability
//
// The database is in WAL journal mode. With the default
// Synchronous "normal", a commit has written the transaction to the WAL file
// with write(2) before Record returns, but has not fsync'ed it: the record
// survives the process being killed (kill -9, a panic, an OOM kill), because
// the data is in the kernel's page cache, but NOT a power loss, kernel panic
// or hypervisor crash, which can lose the last commits (the database itself
// stays consistent: it rolls back to an earlier commit). Set
// Synchronous "full" to fsync the WAL on every commit, so that a record is on
// stable storage before Record returns (as far as the disk honours flushes);
// this costs one fsync per batch, not per record (and "full" also fsyncs the
// blob file before the commit). Checkpoints, which copy the WAL into
// trace.db, run in the background off the commit path (checkpoint.go); the
// WAL restarts once they catch up and is capped by an in-line checkpoint.
//
// # Failure
//
// Any error inserting or committing a batch (disk full, I/O error, read-only
// or corrupt file) is returned to every waiter of that batch: nothing is
// dropped silently, and an error from Record means the record is not in the
// trace (one ambiguity is SQLite's: with Synchronous "full", if the fsync
// after a written commit fails, the batch is answered with an error although
// its records may be readable afterwards, which errs on the safe side). The
// next batch is tried afresh. A record rejected on its own (for
// example a duplicate id) fails only its own Record. SQLite itself does not
// notice when its files are deleted under it (it goes on writing into the
// unlinked inode), so after each commit the writer checks that trace.db and
// its WAL are still the files it opened, and fails the batch otherwise; every
// later batch fails too until the store is reopened.
//
// # Memory
//
// The queue holds at most [Options.QueueSize] records; when it is full, Record
// waits for room (or for its context), it never grows the queue and never
// drops a record.
//
// # Approvals
//
// [Store] is also a [approval.ApprovalStore] (approvals.go: approval.Rules
// over the statements PostgreSQL runs too). Approvals are few (a human
// decides each), so they bypass the group commit: each change is one short
// IMMEDIATE transaction on a connection of their own, with the same
// Synchronous setting as the records, so an approval is as durable as a
// record when the call returns. Each state change is a compare-and-set in
// SQL (UPDATE ... WHERE state = 'pending'; to approve or deny, also AND
// expires >= at; a retry's use, AND used_at = 0), so under SQLite's write
// lock two approvers, or two retries, never both win, also across processes
// sharing the directory. Approving or
// denying an approval after its Expires expires it instead and fails with
// [approval.ErrApprovalDecided]. Approvals are read through the read-only
// connections, so [OpenReadOnly] stores list them; their changing methods
// return [ErrReadOnly] there, and [ErrClosed] after Close. Retention prunes
// decided approvals by age only, never a pending one (see [Retention]).
//
// # ACS sessions
//
// [Store] is also a [acsstate.Store] (acs.go). A session's creation
// and end are written like the approvals, one short IMMEDIATE transaction
// each; the two writes of every step, [Store.RememberRequest] and
// [Store.AppendACSEntry], join the trace writer's queue and commit in its
// transactions beside the records (no transactions of their own), each
// refused call writing nothing and failing nothing else. [Store.AppendACSEntry] is a compare-and-set of the session's
// head and [Store.RememberRequest] an insert that fails on a key still in the
// window, so replicas sharing the directory agree on every chain and every
// replay. Each RememberRequest deletes its session's expired keys. Retention
// does not prune the ACS tables.
//
// # Reading
//
// [Store.Scan] reads through separate read-only connections, so reads never
// wait for the writer, and in short chunks (read.go), so a long scan neither
// holds a read transaction nor loads the records ahead of its caller.
// [OpenReadOnly] opens a store only for reading, as `warden runs` does,
// while a server may be writing it (WAL readers see the last committed state
// and do not block the writer).
package sqlite
