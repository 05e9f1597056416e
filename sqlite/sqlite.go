// Package sqlite is warden's default trace store: one SQLite database,
// DIR/trace.db, written with group commit through the pure-Go
// modernc.org/sqlite driver (no cgo), and beside it DIR/trace.blobs, an
// append-only file with each record's results, input and output (see
// BlobFileName for why and how they stay consistent).
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
// # Reading
//
// [Store.Runs] reads through separate read-only connections, so reads never
// wait for the writer. [OpenReadOnly] opens a store only for reading, as
// `warden runs` does, while a server may be writing it (WAL readers see the
// last committed state and do not block the writer).
package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden"
	_ "modernc.org/sqlite" // registers driver "sqlite"
)

// FileName is the database file inside the store directory.
const FileName = "trace.db"

// MaxLast caps Filter.Last: Runs never returns more records than this.
const MaxLast = 10000

// pageSize is the page size of a new database. Every commit rewrites the
// partly filled last pages of the table and its indexes, and checkpoints copy
// pages with one write each: measured under the bench/ load, 16 KiB beat
// 4 KiB by ~20% and 64 KiB by ~15% in decisions per second.
var pageSize = 8192

// Defaults for the zero Options.
const (
	DefaultMaxBatch    = 256
	DefaultQueueSize   = 4096
	DefaultBusyTimeout = 5 * time.Second
)

// Errors returned by Record.
var (
	ErrClosed   = errors.New("sqlite: trace store is closed")
	ErrReadOnly = errors.New("sqlite: trace store is opened read-only")
)

// Options configure Open. The zero value is sensible.
type Options struct {
	// MaxBatch is the most records committed in one transaction
	// (default DefaultMaxBatch).
	MaxBatch int
	// QueueSize bounds the records waiting for the writer
	// (default DefaultQueueSize). Record waits while the queue is full.
	QueueSize int
	// Synchronous is "normal" (the default, also for "") or "full". With
	// "normal" a recorded decision survives the process being killed but
	// not a power loss; "full" fsyncs every commit so it survives both.
	// See the package documentation.
	Synchronous string
	// BusyTimeout is how long a statement waits for a lock held by another
	// connection or process (default DefaultBusyTimeout).
	BusyTimeout time.Duration
	// OnBatch, if set, is called by the writer after each batch with its
	// size, the time spent inserting and committing it, and the commit
	// error (nil on success), before the batch's Records return. It runs on
	// the writer goroutine: it must be quick and must not call into the
	// Store.
	OnBatch func(size int, dur time.Duration, err error)
}

// Stats are the writer's counters since Open.
type Stats struct {
	Batches   uint64 // batches committed
	Records   uint64 // records committed
	LastBatch int    // size of the last committed batch
	Errors    uint64 // batches whose insert or commit failed
	Failed    uint64 // records answered with an error by the writer
	Queued    int    // records waiting for the writer now
}

// Store is the SQLite trace store. It is safe for concurrent use.
type Store struct {
	dir    string
	rdb    *sql.DB   // read-only connections for Runs
	rblobs *blobFile // the blob file, for Runs

	// Writer side; nil for a store from OpenReadOnly.
	wdb      *sql.DB
	opts     Options
	queue    chan *request
	done     chan struct{} // closed when the writer has exited
	mu       sync.RWMutex  // Record holds R while enqueueing; Close holds W to close queue
	closed   bool
	closeOne sync.Once
	closeErr error

	// The database file as opened: the writer checks after each commit
	// that it is still there (see checkFiles).
	path    string
	dbFile  os.FileInfo
	walFile os.FileInfo // the WAL as first seen by the current writer connection

	// Owned by the writer goroutine.
	conn     *sql.Conn
	stmt     driver.Stmt
	batch    []*request
	ckpt     *checkpointer
	blobs    *blobFile // appended to by the writer
	blobBuf  []byte    // one batch's blobs
	syncMode string

	nBatches, nRecords, nErrors, nFailed atomic.Uint64
	nTaken                               atomic.Uint64 // records the writer has started writing (tests)
	lastBatch                            atomic.Int64
}

var _ warden.Store = (*Store)(nil)

// dsn returns the file: URI of path with the given query parameters.
func dsn(path string, params ...string) string {
	u := url.URL{Scheme: "file", Path: path}
	// url.URL.String gives file:///abs/path, which SQLite accepts.
	return u.String() + "?" + strings.Join(params, "&")
}

func busyParam(d time.Duration) string {
	if d <= 0 {
		d = DefaultBusyTimeout
	}
	return fmt.Sprintf("_pragma=busy_timeout(%d)", d.Milliseconds())
}

// Open opens (creating them if needed: the directory with mode 0700) the store
// in dir, migrates its schema and starts the writer.
func Open(dir string, opts Options) (*Store, error) {
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = DefaultMaxBatch
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = DefaultQueueSize
	}
	var syncMode string
	switch strings.ToLower(opts.Synchronous) {
	case "", "normal":
		syncMode = "NORMAL"
	case "full":
		syncMode = "FULL"
	default:
		return nil, fmt.Errorf("sqlite: unknown Synchronous %q (want \"normal\" or \"full\")", opts.Synchronous)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("sqlite: create trace directory: %w", err)
	}
	path := filepath.Join(abs, FileName)
	// Records hold secrets: create the file 0600 before SQLite does (with the
	// umask's mode); SQLite gives the -wal and -shm files the same mode. An
	// empty file is a valid new database.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	f.Close()

	wdb, err := sql.Open("sqlite", dsn(path,
		busyParam(opts.BusyTimeout),
		"_pragma=synchronous("+syncMode+")",
		"_pragma=wal_autocheckpoint(0)", // see checkpoint.go
		"_txlock=immediate",
	))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	wdb.SetMaxOpenConns(1)
	wdb.SetMaxIdleConns(1)
	wdb.SetConnMaxLifetime(0)
	wdb.SetConnMaxIdleTime(0)
	ctx := context.Background()
	// page_size only takes effect on a new database, and must be set before
	// it switches to WAL; both are persistent, and no-ops later.
	for _, p := range []string{fmt.Sprintf("PRAGMA page_size = %d", pageSize), "PRAGMA journal_mode = WAL"} {
		if _, err := wdb.ExecContext(ctx, p); err != nil {
			wdb.Close()
			return nil, fmt.Errorf("sqlite: %s: %s: %w", path, p, err)
		}
	}
	if err := migrate(ctx, wdb); err != nil {
		wdb.Close()
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	dbFile, err := os.Stat(path)
	if err != nil {
		wdb.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}

	rdb, err := openReader(path, opts.BusyTimeout)
	if err != nil {
		wdb.Close()
		return nil, err
	}
	blobs, err := openBlobs(filepath.Join(abs, BlobFileName), false)
	if err != nil {
		rdb.Close()
		wdb.Close()
		return nil, err
	}
	rblobs, err := openBlobs(filepath.Join(abs, BlobFileName), true)
	if err != nil {
		blobs.close()
		rdb.Close()
		wdb.Close()
		return nil, err
	}
	s := &Store{
		blobs:    blobs,
		rblobs:   rblobs,
		syncMode: syncMode,
		dir:      abs,
		path:     path,
		dbFile:   dbFile,
		rdb:      rdb,
		wdb:      wdb,
		opts:     opts,
		queue:    make(chan *request, opts.QueueSize),
		done:     make(chan struct{}),
		batch:    make([]*request, 0, opts.MaxBatch),
	}
	if err := s.connect(); err != nil {
		blobs.close()
		rblobs.close()
		rdb.Close()
		wdb.Close()
		return nil, err
	}
	cdb, err := sql.Open("sqlite", dsn(path, busyParam(opts.BusyTimeout), "_pragma=synchronous("+syncMode+")"))
	if err != nil {
		s.disconnect(false)
		blobs.close()
		rblobs.close()
		rdb.Close()
		wdb.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	cdb.SetMaxOpenConns(1)
	s.ckpt = startCheckpointer(cdb)
	go s.run()
	return s, nil
}

// OpenReadOnly opens the store in dir for reading only, as `warden runs`
// does; a server may be writing it at the same time. Record on the result
// returns ErrReadOnly.
func OpenReadOnly(dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	path := filepath.Join(abs, FileName)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("sqlite: no trace in %s: %w", abs, err)
	}
	rdb, err := openReader(path, 0)
	if err != nil {
		return nil, err
	}
	if err := checkVersion(context.Background(), rdb); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	rblobs, err := openBlobs(filepath.Join(abs, BlobFileName), true)
	if err != nil {
		rdb.Close()
		return nil, err
	}
	s := &Store{dir: abs, rdb: rdb, rblobs: rblobs, closed: true}
	return s, nil
}

func openReader(path string, busy time.Duration) (*sql.DB, error) {
	rdb, err := sql.Open("sqlite", dsn(path,
		"mode=ro",
		busyParam(busy),
		"_pragma=query_only(1)",
	))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s read-only: %w", path, err)
	}
	rdb.SetMaxOpenConns(4)
	rdb.SetMaxIdleConns(2)
	rdb.SetConnMaxIdleTime(time.Minute)
	if err := rdb.Ping(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("sqlite: open %s read-only: %w", path, err)
	}
	return rdb, nil
}

// Dir returns the store's directory (absolute).
func (s *Store) Dir() string { return s.dir }

// Stats returns the writer's counters.
func (s *Store) Stats() Stats {
	return Stats{
		Batches:   s.nBatches.Load(),
		Records:   s.nRecords.Load(),
		LastBatch: int(s.lastBatch.Load()),
		Errors:    s.nErrors.Load(),
		Failed:    s.nFailed.Load(),
		Queued:    len(s.queue),
	}
}

// request states.
const (
	pending   int32 = iota // queued, the writer has not taken it
	taken                  // the writer is inserting it
	abandoned              // its Record gave up (context done): skip it
)

const nCols = 20

// request is one Record call in flight. Its args are built on the caller's
// goroutine so that the writer only binds and steps.
type request struct {
	args  [nCols]driver.NamedValue
	blob  []byte // results, input, output back to back (blobs.go)
	state atomic.Int32
	err   error      // set by the writer when this record alone failed
	done  chan error // buffered 1; the writer sends exactly once
}

var requestPool = sync.Pool{New: func() any {
	r := &request{done: make(chan error, 1)}
	for i := range r.args {
		r.args[i].Ordinal = i + 1
	}
	return r
}}

func putRequest(r *request) {
	for i := range r.args {
		r.args[i].Value = nil
	}
	if cap(r.blob) > maxPooledBlob {
		r.blob = nil
	}
	r.blob = r.blob[:0]
	r.err = nil
	requestPool.Put(r)
}

// maxPooledBlob keeps a pooled request from pinning a huge input's buffer.
const maxPooledBlob = 64 << 10

// blobOffArg is the index of blob_off in request.args: the writer sets it
// once the batch's blobs are written.
const blobOffArg = 16

func (r *request) fill(rec *warden.Record) error {
	results := rec.Results
	if results == nil {
		results = []warden.Result{}
	}
	r.blob = r.blob[:0]
	b := bytes.NewBuffer(r.blob)
	if err := json.NewEncoder(b).Encode(results); err != nil {
		return fmt.Errorf("sqlite: encode results: %w", err)
	}
	resLen := b.Len() - 1 // Encode's newline is dropped by the next write
	b.Truncate(resLen)
	b.Write(rec.Input)
	b.Write(rec.Output)
	r.blob = b.Bytes()
	var codes driver.Value
	if len(rec.ReasonCodes) > 0 {
		b, err := json.Marshal(rec.ReasonCodes)
		if err != nil {
			return fmt.Errorf("sqlite: encode reason codes: %w", err)
		}
		codes = string(b)
	}
	a := &r.args
	a[0].Value = rec.ID
	a[1].Value = rec.Time.UnixMicro()
	a[2].Value = rec.Event
	a[3].Value = rec.Surface
	a[4].Value = rec.Direction
	a[5].Value = rec.RequestID
	a[6].Value = rec.AgentID
	a[7].Value = rec.SessionID
	a[8].Value = rec.TurnID
	a[9].Value = rec.StepID
	a[10].Value = rec.Decision
	a[11].Value = rec.Reason
	a[12].Value = codes
	a[13].Value = rec.PolicyID
	a[14].Value = rec.PolicyVersion
	a[15].Value = rec.LatencyUS
	a[blobOffArg].Value = int64(0) // set by the writer
	a[17].Value = int64(resLen)
	a[18].Value = int64(len(rec.Input))
	a[19].Value = int64(len(rec.Output))
	return nil
}

const insertSQL = `INSERT INTO runs (id, time, event, surface, direction,
	request_id, agent_id, session_id, turn_id, step_id, decision, reason,
	reason_codes, policy_id, policy_version, latency_us, blob_off, results_len,
	input_len, output_len)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// Record stores rec and returns once the transaction holding it has
// committed (see the package documentation for what that guarantees). An
// error means rec is not in the trace: the batch failed, the store is closed,
// or ctx was done before the writer took rec. Once the writer has taken rec,
// Record waits for that commit's result even if ctx is done, so the answer
// is always truthful. rec must not be modified until Record returns.
func (s *Store) Record(ctx context.Context, rec *warden.Record) error {
	if s.queue == nil {
		return ErrReadOnly
	}
	if rec == nil || rec.ID == "" {
		return errors.New("sqlite: record has no id")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: record not stored: %w", err)
	}
	req := requestPool.Get().(*request)
	if err := req.fill(rec); err != nil {
		putRequest(req)
		return err
	}
	req.state.Store(pending)

	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		putRequest(req)
		return ErrClosed
	}
	select {
	case s.queue <- req:
		s.mu.RUnlock()
	case <-ctx.Done():
		s.mu.RUnlock()
		putRequest(req)
		return fmt.Errorf("sqlite: record not stored (queue full): %w", ctx.Err())
	}

	var err error
	select {
	case err = <-req.done:
	case <-ctx.Done():
		if req.state.CompareAndSwap(pending, abandoned) {
			// The writer will skip it and never touch req.done; req is
			// still referenced by the queue, so it is not reused.
			return fmt.Errorf("sqlite: record not stored: %w", ctx.Err())
		}
		// The writer is committing it: its result is the truth.
		err = <-req.done
	}
	putRequest(req)
	return err
}

// connect acquires the writer's connection and prepares the insert.
func (s *Store) connect() error {
	ctx := context.Background()
	conn, err := s.wdb.Conn(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: writer connection: %w", err)
	}
	err = conn.Raw(func(dc any) error {
		st, err := dc.(driver.ConnPrepareContext).PrepareContext(ctx, insertSQL)
		s.stmt = st
		return err
	})
	if err != nil {
		conn.Close()
		return fmt.Errorf("sqlite: prepare insert: %w", err)
	}
	s.conn = conn
	return nil
}

// disconnect drops the writer's connection; bad marks it unusable so the
// pool discards it instead of reusing it.
func (s *Store) disconnect(bad bool) {
	if s.conn == nil {
		return
	}
	_ = s.conn.Raw(func(any) error {
		if s.stmt != nil {
			s.stmt.Close()
			s.stmt = nil
		}
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
		s.afterCommit()
		clear(b)
		s.batch = b[:0]
	}
}

// maxBatchBytes bounds the blob bytes of one batch (and the writer's buffer
// for them): a batch stops growing once it holds this much.
const maxBatchBytes = 8 << 20

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
	for round := 0; round < gatherRounds && len(b) < s.opts.MaxBatch && size < maxBatchBytes; round++ {
		n := len(b)
	drain:
		for len(b) < s.opts.MaxBatch && size < maxBatchBytes {
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

// commit writes the batch b in one transaction and answers its waiters.
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
	s.nTaken.Add(uint64(len(live)))
	start := time.Now()
	err := s.write(live)
	dur := time.Since(start)

	// Counters and OnBatch first, so that they account for a batch by the
	// time any of its Records returns.
	failed := len(live)
	if err == nil {
		failed = 0
		for _, r := range live {
			if r.err != nil {
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
		s.nRecords.Add(uint64(len(live) - failed))
		s.lastBatch.Store(int64(len(live)))
	}
	if s.opts.OnBatch != nil {
		s.opts.OnBatch(len(live), dur, err)
	}
	for _, r := range live {
		e := err
		if e == nil {
			e = r.err
		}
		r.done <- e
	}
}

// write inserts and commits b. A record rejected by a constraint fails
// alone (r.err); any other error aborts the whole transaction.
func (s *Store) write(b []*request) (err error) {
	if s.conn == nil {
		if err := s.connect(); err != nil {
			return err
		}
	}
	ctx := context.Background() // a commit is never interrupted by one waiter
	bad := false
	err = s.conn.Raw(func(dc any) error {
		c := dc.(driver.ExecerContext)
		if _, err := c.ExecContext(ctx, "BEGIN IMMEDIATE", nil); err != nil {
			return fmt.Errorf("sqlite: begin: %w", err)
		}
		// Holding SQLite's write lock, which every process writing this
		// store takes, the batch's blobs go first, in one write at the
		// file's current end: a row never exists without its bytes, and two
		// processes sharing the directory never write over each other
		// (blobs.go).
		if err := s.writeBlobs(b); err != nil {
			_ = rollback(ctx, c)
			return err
		}
		st := s.stmt.(driver.StmtExecContext)
		for _, r := range b {
			if _, err := st.ExecContext(ctx, r.args[:]); err != nil {
				if isConstraint(err) {
					r.err = fmt.Errorf("sqlite: record rejected: %w", err)
					continue
				}
				bad = rollback(ctx, c)
				return fmt.Errorf("sqlite: insert: %w", err)
			}
		}
		if _, err := c.ExecContext(ctx, "COMMIT", nil); err != nil {
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
		r.args[blobOffArg].Value = end + int64(len(buf))
		buf = append(buf, r.blob...)
	}
	if cap(buf) <= maxBatchBytes {
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

// Runs returns the records matching f, newest first (by time, then by
// insertion order). f.Last defaults to warden.DefaultLast and is capped at
// MaxLast.
func (s *Store) Runs(ctx context.Context, f warden.Filter) ([]warden.Record, error) {
	last := f.Last
	if last <= 0 {
		last = warden.DefaultLast
	}
	if last > MaxLast {
		last = MaxLast
	}
	var q strings.Builder
	q.WriteString(`SELECT id, time, event, surface, direction, request_id,
		agent_id, session_id, turn_id, step_id, decision, reason, reason_codes,
		policy_id, policy_version, latency_us, blob_off, results_len, input_len,
		output_len FROM runs`)
	var args []any
	where := func(col, v string) {
		if v == "" {
			return
		}
		if len(args) == 0 {
			q.WriteString(" WHERE ")
		} else {
			q.WriteString(" AND ")
		}
		q.WriteString(col)
		q.WriteString(" = ?")
		args = append(args, v)
	}
	where("session_id", f.Session)
	where("event", f.Event)
	where("decision", f.Decision)
	q.WriteString(" ORDER BY time DESC, rowid DESC LIMIT ?")
	args = append(args, last)

	rows, err := s.rdb.QueryContext(ctx, q.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: query runs: %w", err)
	}
	defer rows.Close()
	out := []warden.Record{}
	for rows.Next() {
		var (
			r                        warden.Record
			us, off, nRes, nIn, nOut int64
			codes                    []byte
		)
		if err := rows.Scan(&r.ID, &us, &r.Event, &r.Surface, &r.Direction,
			&r.RequestID, &r.AgentID, &r.SessionID, &r.TurnID, &r.StepID,
			&r.Decision, &r.Reason, &codes, &r.PolicyID, &r.PolicyVersion,
			&r.LatencyUS, &off, &nRes, &nIn, &nOut); err != nil {
			return nil, fmt.Errorf("sqlite: read run: %w", err)
		}
		blob, err := s.rblobs.read(off, nRes+nIn+nOut)
		if err != nil {
			return nil, fmt.Errorf("sqlite: run %s: %w", r.ID, err)
		}
		results := blob[:nRes]
		if nIn > 0 {
			r.Input = json.RawMessage(blob[nRes : nRes+nIn])
		}
		if nOut > 0 {
			r.Output = json.RawMessage(blob[nRes+nIn:])
		}
		r.Time = time.UnixMicro(us).UTC()
		if len(codes) > 0 {
			if err := json.Unmarshal(codes, &r.ReasonCodes); err != nil {
				return nil, fmt.Errorf("sqlite: run %s: reason codes: %w", r.ID, err)
			}
		}
		r.Results = []warden.Result{}
		if len(results) > 0 {
			if err := json.Unmarshal(results, &r.Results); err != nil {
				return nil, fmt.Errorf("sqlite: run %s: results: %w", r.ID, err)
			}
			if r.Results == nil { // stored "null"
				r.Results = []warden.Result{}
			}
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: read runs: %w", err)
	}
	return out, nil
}

// Close stops accepting records, commits those already queued, stops the
// writer and closes the database. It is idempotent: later calls return the
// first call's result.
func (s *Store) Close() error {
	s.closeOne.Do(func() {
		if s.queue != nil {
			s.mu.Lock()
			s.closed = true
			close(s.queue)
			s.mu.Unlock()
			<-s.done
		}
		// The writer's connection closes last: as the last connection, it
		// checkpoints the WAL and removes it.
		var errs []error
		if s.ckpt != nil {
			errs = append(errs, s.ckpt.close())
		}
		errs = append(errs, s.rdb.Close(), s.rblobs.close())
		if s.queue != nil {
			s.disconnect(false)
			errs = append(errs, s.wdb.Close(), s.blobs.close())
		}
		if err := errors.Join(errs...); err != nil {
			s.closeErr = fmt.Errorf("sqlite: close: %w", err)
		}
	})
	return s.closeErr
}
