package sqlite

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/wardenhq/warden/internal/tracesql"
)

// connect acquires the writer's connection and prepares the insert.
func (s *Store) connect() error {
	ctx := context.Background()
	conn, err := s.wdb.Conn(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: writer connection: %w", err)
	}
	err = conn.Raw(func(dc any) error {
		pc := dc.(driver.ConnPrepareContext)
		st, err := pc.PrepareContext(ctx, insertSQL)
		if err != nil {
			return err
		}
		s.stmt = st
		return s.wst.prepare(ctx, pc)
	})
	if err != nil {
		_ = conn.Raw(func(any) error { s.closeStmts(); return nil })
		conn.Close()
		return fmt.Errorf("sqlite: prepare the writer's statements: %w", err)
	}
	s.conn = conn
	return nil
}

// writerStmts are the statements every batch runs besides the insert,
// prepared once per writer connection: parsing them anew for each batch
// was ~12 % of warden's CPU when batches are small (one decision at a
// time, the MCP gateway's sequential calls).
type writerStmts struct {
	begin, commit  driver.Stmt
	head, ckptHead driver.Stmt // readHead's two queries
	logPos         driver.Stmt // UPDATE trace_log (the trace log's position)
	// The ACS writes that join the writer's batches (acs.go).
	acsRemember, acsForget, acsAdvance, acsInsert driver.Stmt
}

// writerSQL are writerStmts' statements, in the order of its fields.
var writerSQL = [...]string{
	"BEGIN IMMEDIATE",
	"COMMIT",
	`SELECT hash FROM runs ORDER BY rowid DESC LIMIT 1`,
	`SELECT last_hash FROM trace_checkpoints ORDER BY rowid DESC LIMIT 1`,
	"UPDATE trace_log SET indexed = ?",
	tracesql.Numbered(tracesql.ACSRemember), acsForget,
	tracesql.Numbered(tracesql.ACSAdvance), acsInsert,
}

func (w *writerStmts) all() [len(writerSQL)]*driver.Stmt {
	return [...]*driver.Stmt{&w.begin, &w.commit, &w.head, &w.ckptHead, &w.logPos,
		&w.acsRemember, &w.acsForget, &w.acsAdvance, &w.acsInsert}
}

// prepare prepares every statement on pc; on an error the ones prepared
// stay set, for close.
func (w *writerStmts) prepare(ctx context.Context, pc driver.ConnPrepareContext) error {
	for i, p := range w.all() {
		st, err := pc.PrepareContext(ctx, writerSQL[i])
		if err != nil {
			return fmt.Errorf("%s: %w", writerSQL[i], err)
		}
		*p = st
	}
	return nil
}

// closeStmts closes the writer connection's prepared statements; called
// inside its Raw.
func (s *Store) closeStmts() {
	if s.stmt != nil {
		s.stmt.Close()
		s.stmt = nil
	}
	for _, p := range s.wst.all() {
		if *p != nil {
			(*p).Close()
			*p = nil
		}
	}
}

// execStmt runs a prepared statement that returns no rows.
func execStmt(ctx context.Context, st driver.Stmt, args ...driver.NamedValue) error {
	_, err := st.(driver.StmtExecContext).ExecContext(ctx, args)
	return err
}

// disconnect drops the writer's connection; bad marks it unusable so the
// pool discards it instead of reusing it.
func (s *Store) disconnect(bad bool) {
	if s.conn == nil {
		return
	}
	_ = s.conn.Raw(func(any) error {
		s.closeStmts()
		if bad {
			return driver.ErrBadConn
		}
		return nil
	})
	s.conn.Close()
	s.conn = nil
	// A new connection may find (and create) a new WAL legitimately.
	s.walFile = nil
}

// run is the writer goroutine.
func (s *Store) run() {
	defer close(s.done)
	for first := range s.queue {
		b := s.gather(append(s.batch[:0], first))
		s.commit(b)
		if s.lg != nil {
			s.cutLog()
		} else {
			s.afterCommit()
		}
		clear(b)
		s.batch = b[:0]
	}
}

// gatherRounds and gatherDelay bound how long the writer keeps gathering a
// batch while more records keep arriving.
const (
	gatherRounds = 3
	gatherDelay  = 500 * time.Microsecond
)

// gather drains the queue into b. Each commit costs the same whatever its
// size (WAL frames for every touched page), so under load the writer lets
// the decisions already in progress reach the queue before it commits: it
// yields the processor and drains again while the previous round found new
// records. Idle or lightly loaded, the first empty round ends the gathering
// at once (a yield with nothing else runnable returns immediately), so a lone
// decision waits no longer than before.
func (s *Store) gather(b []*request) []*request {
	start := time.Now()
	size := len(b[0].blob)
	for round := 0; round < gatherRounds && len(b) < s.opts.MaxBatch && size < tracesql.MaxBatchBytes; round++ {
		n := len(b)
	drain:
		for len(b) < s.opts.MaxBatch && size < tracesql.MaxBatchBytes {
			select {
			case r, ok := <-s.queue:
				if !ok {
					break drain
				}
				b = append(b, r)
				size += len(r.blob)
			default:
				break drain
			}
		}
		if (round > 0 && len(b) == n) || time.Since(start) > gatherDelay {
			break
		}
		runtime.Gosched()
	}
	return b
}

// commit stores the live requests of batch b and answers their waiters:
// records and ACS calls in one transaction, or, with a trace log, the
// records appended to the log and the calls in a transaction of their own.
func (s *Store) commit(b []*request) {
	live := b[:0]
	for _, r := range b {
		if r.state.CompareAndSwap(pending, taken) {
			live = append(live, r)
		}
	}
	if len(live) == 0 {
		return
	}
	s.nTaken.Add(uint64(len(live) - countOps(live)))
	if s.lg == nil {
		start := time.Now()
		err := s.write(live, 0)
		s.answer(live, err, time.Since(start))
		return
	}
	recs, ops := live, []*request(nil)
	if n := countOps(live); n > 0 {
		recs, ops = make([]*request, 0, len(live)-n), make([]*request, 0, n)
		for _, r := range live {
			if r.op != nil {
				ops = append(ops, r)
			} else {
				recs = append(recs, r)
			}
		}
	}
	if len(ops) > 0 {
		s.answer(ops, s.write(ops, 0), 0)
	}
	if len(recs) > 0 {
		start := time.Now()
		err := s.appendLogged(recs)
		s.answer(recs, err, time.Since(start))
	}
}

// countOps returns how many of b are ACS calls.
func countOps(b []*request) int {
	n := 0
	for _, r := range b {
		if r.op != nil {
			n++
		}
	}
	return n
}

// answer accounts for the stored batch b (its records; ACS calls are not
// trace records) and answers each waiter: err if the batch failed, else
// its own r.err.
func (s *Store) answer(b []*request, err error, dur time.Duration) {
	recs := len(b) - countOps(b)
	// Counters and OnBatch first, so that they account for a batch by the
	// time any of its Records returns.
	if recs > 0 {
		failed := recs
		if err == nil {
			failed = 0
			for _, r := range b {
				if r.op == nil && r.err != nil {
					failed++
				}
			}
		}
		if failed > 0 {
			s.nFailed.Add(uint64(failed))
		}
		if err != nil {
			s.nErrors.Add(1)
		} else {
			s.nBatches.Add(1)
			s.nRecords.Add(uint64(recs - failed))
			s.lastBatch.Store(int64(recs))
		}
		if s.opts.OnBatch != nil {
			s.opts.OnBatch(recs, dur, err)
		}
	}
	for _, r := range b {
		e := err
		if e == nil {
			e = r.err
		}
		r.done <- e
	}
}

// write inserts and commits b. A record rejected by a constraint fails
// alone (r.err); any other error aborts the whole transaction. With logTo
// > 0 (the indexer of a trace log) the same transaction records that the
// log is indexed up to logTo.
func (s *Store) write(b []*request, logTo uint64) (err error) {
	ctx := context.Background() // a commit is never interrupted by one waiter
	bad := false
	// The lock comes first: with a trace log, the indexer and the writer
	// (its ACS calls) both write on the one connection.
	s.txMu.Lock()
	defer s.txMu.Unlock()
	if s.conn == nil {
		if err := s.connect(); err != nil {
			return err
		}
	}
	records := len(b) > countOps(b)
	err = s.conn.Raw(func(dc any) error {
		c := dc.(driver.ExecerContext)
		if err := execStmt(ctx, s.wst.begin); err != nil {
			return fmt.Errorf("sqlite: begin: %w", err)
		}
		// Holding SQLite's write lock, which every process writing this
		// store takes, the batch's blobs go first, in one write at the
		// file's current end: a row never exists without its bytes, and two
		// processes sharing the directory never write over each other
		// (blobs.go).
		var head []byte
		if records {
			if err := s.writeBlobs(b); err != nil {
				_ = rollback(ctx, c)
				return err
			}
			// The chain's head is read under the same lock: another
			// process may have appended since this one's last batch.
			var err error
			if head, err = readHead(ctx, s.wst.head, s.wst.ckptHead); err != nil {
				bad = rollback(ctx, c)
				return err
			}
		}
		st := s.stmt.(driver.StmtExecContext)
		for _, r := range b {
			if r.op != nil {
				if err := s.runOp(ctx, r.op); err != nil { // a refused call is its own answer (op.ok)
					bad = rollback(ctx, c)
					return err
				}
				continue
			}
			r.hash = s.keyed.Chain(&r.content, head)
			n := copy(r.prev[:], head)
			r.args[prevHashArg].Value = r.prev[:n]
			r.args[hashArg].Value = r.hash[:]
			if _, err := st.ExecContext(ctx, r.args[:]); err != nil {
				if isConstraint(err) {
					r.err = fmt.Errorf("sqlite: record rejected: %w", err)
					continue // the head stays: the row is not in the trace
				}
				bad = rollback(ctx, c)
				return fmt.Errorf("sqlite: insert: %w", err)
			}
			head = r.hash[:]
		}
		if logTo > 0 {
			if err := execStmt(ctx, s.wst.logPos, driver.NamedValue{Ordinal: 1, Value: int64(logTo)}); err != nil {
				bad = rollback(ctx, c)
				return fmt.Errorf("sqlite: move the trace log's position: %w", err)
			}
		}
		if err := execStmt(ctx, s.wst.commit); err != nil {
			bad = rollback(ctx, c)
			return fmt.Errorf("sqlite: commit: %w", err)
		}
		return nil
	})
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) {
		bad = true
	}
	if bad {
		s.disconnect(true)
	}
	if err == nil {
		err = s.checkFiles()
	}
	return err
}

// readHead returns the newest row's hash, or the newest checkpoint's when
// retention has deleted every row, or none (a new trace, or one whose newest
// row is from before the chain), by the prepared statements of
// writerSQL's two queries. The caller holds the write lock.
func readHead(ctx context.Context, head, ckptHead driver.Stmt) ([]byte, error) {
	for i, st := range [...]driver.Stmt{head, ckptHead} {
		rows, err := st.(driver.StmtQueryContext).QueryContext(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("sqlite: read chain head: %w", err)
		}
		v := make([]driver.Value, 1)
		err = rows.Next(v)
		rows.Close()
		if err == io.EOF {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("sqlite: read chain head: %w", err)
		}
		var h []byte
		switch x := v[0].(type) {
		case string:
			h = []byte(x)
		case []byte:
			h = bytes.Clone(x)
		}
		if i == 1 { // a checkpoint's hash is hex
			var ok bool
			if h, ok = decodeHash(string(h)); !ok {
				return nil, fmt.Errorf("sqlite: checkpoint hash %q is not a SHA-256 hash", v[0])
			}
		}
		if len(h) != 0 && len(h) != sha256.Size {
			return nil, fmt.Errorf("sqlite: chain head is %d bytes, not a SHA-256 hash", len(h))
		}
		return h, nil
	}
	return nil, nil
}

// writeBlobs appends the batch's blobs in one write at the blob file's
// current end and points each row at its bytes. The caller holds the write
// lock.
func (s *Store) writeBlobs(b []*request) error {
	end, err := s.blobs.size()
	if err != nil {
		return err
	}
	buf := s.blobBuf[:0]
	for _, r := range b {
		if r.op != nil {
			continue
		}
		r.args[blobOffArg].Value = end + int64(len(buf))
		buf = append(buf, r.blob...)
	}
	if cap(buf) <= tracesql.MaxBatchBytes {
		s.blobBuf = buf
	}
	if err := s.blobs.write(buf, end); err != nil {
		return err
	}
	if s.syncMode == "FULL" {
		if err := s.blobs.f.Sync(); err != nil {
			return fmt.Errorf("sqlite: sync %s: %w", BlobFileName, err)
		}
	}
	return nil
}

// checkFiles reports an error if the database file or its WAL has been
// deleted or replaced since Open. SQLite does not notice: it keeps writing
// to the open, unlinked file, so commits would succeed into a file nobody
// will ever read. Such a batch is answered with an error (fail closed), and
// so is every later one, until the store is reopened.
func (s *Store) checkFiles() error {
	fi, err := os.Stat(s.path)
	if err != nil {
		return fmt.Errorf("sqlite: trace database %s is gone: %w", s.path, err)
	}
	if !os.SameFile(fi, s.dbFile) {
		return fmt.Errorf("sqlite: trace database %s was replaced since it was opened", s.path)
	}
	if fi, err := os.Stat(s.blobs.f.Name()); err != nil || !os.SameFile(fi, s.blobs.info) {
		return fmt.Errorf("sqlite: %s in %s is gone or was replaced since it was opened", BlobFileName, s.dir)
	}
	wal, err := os.Stat(s.path + "-wal")
	if err != nil {
		return fmt.Errorf("sqlite: write-ahead log of %s is gone: %w", s.path, err)
	}
	if s.walFile == nil {
		s.walFile = wal
	} else if !os.SameFile(wal, s.walFile) {
		// Another connection recreated it after it was deleted; ours
		// still writes to the deleted one.
		return fmt.Errorf("sqlite: write-ahead log of %s is gone: it was replaced since it was opened", s.path)
	}
	return nil
}

// rollback ends a failed transaction. SQLite may already have rolled it back
// itself (after SQLITE_FULL, SQLITE_IOERR, ...): that is fine. It reports
// whether the connection is in an unknown state and must be replaced.
func rollback(ctx context.Context, c driver.ExecerContext) (bad bool) {
	_, err := c.ExecContext(ctx, "ROLLBACK", nil)
	return err != nil && !strings.Contains(err.Error(), "no transaction is active")
}

// sqliteCoder is implemented by modernc.org/sqlite's *Error.
type sqliteCoder interface{ Code() int }

const sqliteConstraint = 19 // SQLITE_CONSTRAINT (primary result code)

func isConstraint(err error) bool {
	var c sqliteCoder
	return errors.As(err, &c) && c.Code()&0xff == sqliteConstraint
}
