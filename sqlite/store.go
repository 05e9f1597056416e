package sqlite

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden/internal/tracehash"
)

// FileName is the database file inside the store directory.
const FileName = "trace.db"

// pageSize is the page size of a new database. Every commit rewrites, whole,
// each page it touched (in the WAL, and again at checkpoint). When rows held
// their inputs, 16 KiB pages beat 4 KiB by ~20% in decisions per second
// under the bench/ load, and 8 KiB was chosen once the inputs moved to the
// blob file. Rows are now small, and an ACS step touches a page of each of
// several per-session B-trees (its request key, its chain entry, its
// session's head, the record's session index): at 8 KiB, bench/compare.sh
// ACS=1 wrote ~89 KB to disk a step. 4 KiB won every one of seven
// alternating pairs on 2026-11-27: AOS 0.497–0.528 → 0.509–0.551 the
// floor (+3.7 % on the means), ACS 4,312–4,697 → 4,612–4,892 steps/s.
var pageSize = 4096

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
	// MaxBatch is the most records (and ACS RememberRequest and
	// AppendACSEntry calls, which share the writer's transactions) committed
	// in one transaction (default DefaultMaxBatch).
	MaxBatch int
	// QueueSize bounds the records and ACS calls waiting for the writer
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
	// Log makes a segment log in DIR/trace.log the durable point of each
	// record, its rows indexed behind the answers (logged.go). With
	// Synchronous "full" each batch is fdatasync'ed before it is answered.
	Log bool
	// MaxUnindexed bounds the records answered and not yet indexed with
	// Log (default DefaultMaxUnindexed); past it Record fails.
	MaxUnindexed int
	// ChainKey is the key the records are chained under (32 bytes,
	// HMAC-SHA256; chainkey.go, docs/verify.md). When nil, it is read from
	// ChainKeyFile, else from tracehash.DefaultKeyFile ($WARDEN_TRACE_KEY_FILE,
	// else $XDG_CONFIG_HOME/warden/trace.chain.key), created there when
	// there is none. A trace keyed with another key does not open.
	ChainKey     []byte
	ChainKeyFile string
}

// Stats are the writer's counters since Open.
type Stats struct {
	Batches   uint64 // batches committed
	Records   uint64 // records committed
	LastBatch int    // size of the last committed batch
	Errors    uint64 // batches whose insert or commit failed
	Failed    uint64 // records answered with an error by the writer
	Queued    int    // records waiting for the writer now
	// With a trace log (Options.Log): the records answered and not yet
	// indexed now, and those Open indexed from the log (answered before
	// the process ended, not indexed then).
	Unindexed int
	Replayed  uint64
}

// pointReader returns the connections for a decision's point reads: pdb,
// or rdb in a store from OpenReadOnly.
func (s *Store) pointReader() *sql.DB {
	if s.pdb != nil {
		return s.pdb
	}
	return s.rdb
}

// Store is the SQLite trace store. It is safe for concurrent use.
type Store struct {
	approvals  // the approval.ApprovalStore (approvals.go)
	agbomRules // the agbom.Store (agbom.go)
	fleetRules // the registry.Store and audit.CursorStore (fleet.go)
	acsRules   // the acsstate.Store (acs.go)
	labelRules // the labels.Store (labels.go)

	dir    string
	rdb    *sql.DB   // read-only connections for Scan
	rblobs *blobFile // the blob file, for Scan
	// pdb: read-only connections without mmap for the point reads a
	// decision makes (an ACS session, a session's labels); nil from
	// OpenReadOnly, where rdb serves them (pointReader).
	pdb *sql.DB

	// chainKey is the key the records are chained under (nil from
	// OpenReadOnly); keyed chains with it, on the writer goroutine (with
	// a trace log, the indexer's).
	chainKey []byte
	keyed    *tracehash.Keyed

	// Writer side; nil for a store from OpenReadOnly.
	wdb      *sql.DB
	opts     Options
	queue    chan *request
	done     chan struct{} // closed when the writer has exited
	mu       sync.RWMutex  // Record holds R while enqueueing, an approval change while it runs; Close holds W to close queue
	closed   bool
	closeOne sync.Once
	closeErr error

	// The database file as opened: the writer checks after each commit
	// that it is still there (see checkFiles).
	path    string
	dbFile  os.FileInfo
	walFile os.FileInfo // the WAL as first seen by the current writer connection

	// The trace log (Options.Log), nil without one.
	lg *logState

	// Owned by the writer goroutine (with a trace log, by the indexer).
	conn     *sql.Conn
	stmt     driver.Stmt // the insert
	wst      writerStmts // the rest of a batch's statements
	batch    []*request
	ckpt     *checkpointer
	blobs    *blobFile // appended to by the writer
	blobBuf  []byte    // one batch's blobs
	syncMode string

	pmu     sync.Mutex
	pruner  *pruner // nil until StartPruning or Prune
	pclosed bool

	// adb is the connection approvals and ACS sessions are written on
	// (approvals.go, acs.go); nil for a store from OpenReadOnly. Its
	// operations hold mu's R lock, so Close waits for them before it
	// closes adb.
	adb *sql.DB
	acs acsStmts // the ACS session read, prepared (acs.go)
	// txMu is held around every write transaction of this process (the
	// record writer's batches, with their ACS calls, the pruner's deletes,
	// approvals, ACS sessions), so they take turns in Go instead of colliding on SQLite's
	// write lock, where the loser sleeps in SQLite's busy handler (1, 2, 5,
	// 10… ms): the collisions made an ACS step's p99 tens of milliseconds.
	// Another process sharing the directory still meets them on the lock
	// (busy timeout).
	txMu sync.Mutex

	nBatches, nRecords, nErrors, nFailed atomic.Uint64
	nTaken                               atomic.Uint64 // records the writer has started writing (tests)
	lastBatch                            atomic.Int64
}

var _ audit.Store = (*Store)(nil)

// Dir returns the store's directory (absolute).
func (s *Store) Dir() string { return s.dir }

// Stats returns the writer's counters.
func (s *Store) Stats() Stats {
	st := Stats{
		Batches:   s.nBatches.Load(),
		Records:   s.nRecords.Load(),
		LastBatch: int(s.lastBatch.Load()),
		Errors:    s.nErrors.Load(),
		Failed:    s.nFailed.Load(),
		Queued:    len(s.queue),
	}
	if lg := s.lg; lg != nil {
		lg.mu.Lock()
		st.Unindexed, st.Replayed = lg.qRecords, lg.replayed
		lg.mu.Unlock()
	}
	return st
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
		// The indexer catches up with the log before the connection goes.
		var logErr error
		if s.lg != nil {
			logErr = s.closeLog()
		}
		// The writer's connection closes last: as the last connection, it
		// checkpoints the WAL and removes it.
		errs := []error{logErr}
		errs = append(errs, s.closePruner())
		if s.ckpt != nil {
			errs = append(errs, s.ckpt.close())
		}
		errs = append(errs, s.rdb.Close(), s.rblobs.close())
		if s.pdb != nil {
			errs = append(errs, s.pdb.Close())
		}
		if s.adb != nil {
			errs = append(errs, s.adb.Close())
		}
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
