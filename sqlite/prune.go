package sqlite

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/wardenhq/warden/sigkey"
)

// Retention says which records the store prunes: those older than MaxAge
// and, while the trace is larger than MaxSize bytes, the oldest. The zero
// value prunes nothing (the default: a trace grows until it is pruned by
// configuration, trace.retention and trace.max_size).
//
// Records are pruned oldest first in insertion order, in transactions of
// at most Batch records on a connection of the pruner's own, with a pause
// between them, so a commit of the writer waits at most for one small
// DELETE. A pass stops at the first record (in insertion order) that is
// young enough. The trace's size is its live database pages plus its live
// blob bytes (from the oldest remaining record's blob to the end of
// trace.blobs); the WAL, bounded by checkpoints, is not counted.
//
// Blob bytes of pruned records are given back to the file system by
// punching holes in trace.blobs (Linux fallocate PUNCH_HOLE; on other
// systems or file systems without it they are not reclaimed: see
// docs/security-secrets.md). Pruned records always form a prefix of the
// file, so the pruner punches [0, the oldest remaining record's blob) and
// nothing a row still points at; it punches one pass late, so a scan that
// has just read a pruned row still finds its bytes, and a scan that finds
// a row gone skips it. The file keeps its apparent size (new blobs are
// appended at its end); only its blocks are freed. A crash at any point
// leaves rows and blobs consistent: rows are deleted in committed
// transactions first, holes are punched only below every remaining row.
//
// Approvals (approvals.go) are pruned by age only, never for size, and a
// pending approval never: with MaxAge, a pass also deletes the decided
// (approved, denied or expired) approvals decided and, if used, used before
// the same cutoff as the records, so an approval goes with the records of
// its decision and its retry. They are small and rare (a human decides
// each); without MaxAge they are kept.
type Retention struct {
	MaxAge  time.Duration
	MaxSize int64
	// Interval is the time between passes (default DefaultPruneInterval).
	Interval time.Duration
	// Batch is the most records deleted in one transaction (default
	// DefaultPruneBatch).
	Batch int
	// Now is the clock (default time.Now), for tests.
	Now func() time.Time
	// SigningKey, when set (acs.signing_key), signs the checkpoints with
	// ML-DSA-65 or SLH-DSA-128s instead of the data directory's Ed25519
	// key (SignKeyFile), which is then neither read nor created.
	SigningKey *sigkey.PrivateKey
}

// Defaults of the zero Retention fields.
const (
	DefaultPruneInterval = time.Minute
	DefaultPruneBatch    = 500
	pruneYield           = 20 * time.Millisecond // between a pass's transactions
)

func (r Retention) enabled() bool { return r.MaxAge > 0 || r.MaxSize > 0 }

// PruneStats say what one Prune pass did.
type PruneStats struct {
	Deleted   int   // records deleted
	Approvals int   // decided approvals deleted (by age)
	Labels    int   // session labels deleted (by age, their session gone from the trace)
	Punched   int64 // blob bytes given back (holes punched) in this pass
	Size      int64 // the trace's size after the pass (see Retention)
	Complete  bool  // false when the pass stopped early (ctx, an error)
}

// pruner runs Prune passes in the background until the store closes.
type pruner struct {
	db       *sql.DB
	blobPath string
	dir      string             // the data directory: where SignKeyFile is
	key      ed25519.PrivateKey // signs checkpoints; loaded on first use, under pass
	pq       *sigkey.PrivateKey // signs checkpoints instead (Retention.SigningKey); under pass
	pass     sync.Mutex         // one pass at a time
	punchTo  int64              // punch up to here at the next pass (one pass late); under pass
	mu       sync.Mutex         // guards started
	started  bool               // the background goroutine runs
	stop     chan struct{}
	done     chan struct{} // closed when the background goroutine ends
	// txMu is the store's (Store.txMu): each delete transaction takes its
	// turn with the record writer's batches instead of meeting them on
	// SQLite's lock, where the writer slept in the busy handler.
	txMu *sync.Mutex
}

// StartPruning prunes the trace in the background by r, a pass every
// r.Interval (the first at once), until Close. It does nothing when r
// prunes nothing, for a read-only store, or when the store is pruning
// already (the first Retention stays). Errors of a pass are reported to
// onErr (if not nil) and the next pass tries again.
func (s *Store) StartPruning(r Retention, onErr func(error)) error {
	if !r.enabled() || s.queue == nil {
		return nil
	}
	p, err := s.prunerOf()
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		return nil
	}
	p.started = true
	interval := r.Interval
	if interval <= 0 {
		interval = DefaultPruneInterval
	}
	go func() {
		defer close(p.done)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-p.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		t := time.NewTimer(0)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
			if _, err := p.prune(ctx, r); err != nil && ctx.Err() == nil && onErr != nil {
				onErr(err)
			}
			t.Reset(interval)
		}
	}()
	return nil
}

// Prune runs one pass by r now (StartPruning runs them in the background)
// and returns what it did.
func (s *Store) Prune(ctx context.Context, r Retention) (PruneStats, error) {
	if s.queue == nil {
		return PruneStats{}, ErrReadOnly
	}
	if err := s.caughtUp(ctx); err != nil {
		return PruneStats{}, err
	}
	p, err := s.prunerOf()
	if err != nil {
		return PruneStats{}, err
	}
	return p.prune(ctx, r)
}

// prunerOf returns the store's pruner, opening it on first use.
func (s *Store) prunerOf() (*pruner, error) {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	if s.pruner != nil {
		return s.pruner, nil
	}
	if s.pclosed {
		return nil, ErrClosed
	}
	db, err := sql.Open("sqlite", dsn(s.path, busyParam(s.opts.BusyTimeout), "_pragma=synchronous("+s.syncMode+")", "_txlock=immediate"))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", s.path, err)
	}
	db.SetMaxOpenConns(1)
	s.pruner = &pruner{db: db, blobPath: filepath.Join(s.dir, BlobFileName), dir: s.dir, stop: make(chan struct{}), done: make(chan struct{}), txMu: &s.txMu}
	return s.pruner, nil
}

// closePruner stops the background pruner and closes its connection.
func (s *Store) closePruner() error {
	s.pmu.Lock()
	p := s.pruner
	s.pclosed = true
	s.pmu.Unlock()
	if p == nil {
		return nil
	}
	close(p.stop)
	p.mu.Lock()
	started := p.started
	p.mu.Unlock()
	if started {
		<-p.done
	}
	p.pass.Lock() // a pass from Prune finishes first
	defer p.pass.Unlock()
	return p.db.Close()
}

// prune is one pass: it deletes batches of the oldest records while the
// oldest is older than r.MaxAge or the trace is larger than r.MaxSize,
// then punches the blob bytes freed a pass ago.
func (p *pruner) prune(ctx context.Context, r Retention) (PruneStats, error) {
	p.pass.Lock()
	defer p.pass.Unlock()
	p.pq = r.SigningKey
	var st PruneStats
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	batch := r.Batch
	if batch <= 0 {
		batch = DefaultPruneBatch
	}
	var cutoff int64 // unix µs; records with time < cutoff are too old
	if r.MaxAge > 0 {
		cutoff = now().Add(-r.MaxAge).UnixMicro()
	}
	limit := int64(-1) // the blob offset below which no row points, once known
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return st, ctx.Err()
			case <-time.After(pruneYield):
			}
		}
		overSize := false
		if r.MaxSize > 0 {
			size, err := p.size(ctx)
			if err != nil {
				return st, err
			}
			st.Size = size
			overSize = size > r.MaxSize
		}
		n, lim, err := p.deleteBatch(ctx, batch, cutoff, overSize)
		if err != nil {
			return st, err
		}
		st.Deleted += n
		if lim >= 0 {
			limit = lim
		}
		if n < batch && !(overSize && n > 0) {
			break
		}
	}
	if cutoff != 0 {
		n, err := p.deleteApprovals(ctx, batch, cutoff)
		st.Approvals = n
		if err != nil {
			return st, err
		}
		if st.Labels, err = p.deleteLabels(ctx, batch, cutoff); err != nil {
			return st, err
		}
	}
	// Punch what the previous pass freed, then remember this pass's limit.
	if p.punchTo > 0 {
		n, err := punchPrefix(p.blobPath, p.punchTo)
		if err != nil {
			return st, err
		}
		st.Punched = n
	}
	if limit >= 0 {
		p.punchTo = limit
	}
	if r.MaxSize > 0 {
		size, err := p.size(ctx)
		if err != nil {
			return st, err
		}
		st.Size = size
	}
	st.Complete = true
	return st, nil
}

// deleteBatch deletes, in one transaction, the longest prefix (at most
// batch records, in insertion order) of records older than cutoff or, with
// all, the first batch records. It returns how many it deleted and, when
// it deleted any, the blob offset of the oldest remaining record (or the
// blob file's end when none remains), read under the write lock.
//
// The prefix is read and its checkpoint signed before the write lock is
// taken: signing with SLH-DSA-128s takes a large fraction of a second,
// which the record writer must not wait for. Only pruning deletes rows
// and the writer only appends, so the prefix stays as read; should
// another process have pruned meanwhile (the DELETE then removes fewer
// rows than read), the transaction is rolled back and the next pass
// starts over.
func (p *pruner) deleteBatch(ctx context.Context, batch int, cutoff int64, all bool) (int, int64, error) {
	if !all && cutoff == 0 {
		return 0, -1, nil
	}
	if p.key == nil && p.pq == nil { // before the write lock: creating it syncs a file
		key, err := loadSignKey(p.dir)
		if err != nil {
			return 0, -1, fmt.Errorf("sqlite: prune: %w", err)
		}
		p.key = key
	}
	rows, err := p.db.QueryContext(ctx, `SELECT rowid, time, id, hash FROM runs ORDER BY rowid LIMIT ?`, batch)
	if err != nil {
		return 0, -1, fmt.Errorf("sqlite: prune: %w", err)
	}
	n, last := 0, int64(-1)
	var lastID, lastHash string
	for rows.Next() {
		var rowid, t int64
		var id string
		var h []byte
		if err := rows.Scan(&rowid, &t, &id, &h); err != nil {
			rows.Close()
			return 0, -1, fmt.Errorf("sqlite: prune: %w", err)
		}
		if !all && t >= cutoff {
			break
		}
		n, last, lastID, lastHash = n+1, rowid, id, hex.EncodeToString(h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, -1, fmt.Errorf("sqlite: prune: %w", err)
	}
	if n == 0 {
		return 0, -1, nil
	}
	// The chain will start at a record whose predecessor is gone: a signed
	// checkpoint, in the same transaction as the delete, keeps it
	// verifiable (verify.go).
	cp := &Checkpoint{Time: time.Now().UnixMicro(), LastRowID: last, LastID: lastID,
		LastHash: lastHash, Deleted: int64(n), Algorithm: string(sigkey.Ed25519)}
	if p.pq != nil {
		cp.Algorithm, cp.PublicKey = string(p.pq.Alg()), hex.EncodeToString(p.pq.Public().Bytes())
		sig, err := p.pq.Sign(checkpointMessage(cp))
		if err != nil {
			return 0, -1, fmt.Errorf("sqlite: prune: checkpoint: %w", err)
		}
		cp.Signature = hex.EncodeToString(sig)
	} else {
		cp.PublicKey = hex.EncodeToString(p.key.Public().(ed25519.PublicKey))
		cp.Signature = hex.EncodeToString(ed25519.Sign(p.key, checkpointMessage(cp)))
	}

	p.txMu.Lock()
	defer p.txMu.Unlock()
	tx, err := p.db.BeginTx(ctx, nil) // IMMEDIATE (_txlock): the write lock
	if err != nil {
		return 0, -1, fmt.Errorf("sqlite: prune: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	res, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE rowid <= ?`, last)
	if err != nil {
		return 0, -1, fmt.Errorf("sqlite: prune: %w", err)
	}
	if got, err := res.RowsAffected(); err != nil || got != int64(n) {
		return 0, -1, err // pruned meanwhile by another process: rolled back
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO trace_checkpoints (time, last_rowid,
		last_id, last_hash, deleted, public_key, signature, algorithm) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		cp.Time, cp.LastRowID, cp.LastID, cp.LastHash, cp.Deleted, cp.PublicKey, cp.Signature, cp.Algorithm); err != nil {
		return 0, -1, fmt.Errorf("sqlite: prune: checkpoint: %w", err)
	}
	limit, err := liveStart(ctx, tx, p.blobPath)
	if err != nil {
		return 0, -1, err
	}
	if err := tx.Commit(); err != nil {
		return 0, -1, fmt.Errorf("sqlite: prune: %w", err)
	}
	return n, limit, nil
}

// deleteApprovals deletes, in transactions of at most batch rows with a
// pause between them, the approvals that are no longer pending and were
// decided and used (when they were) before cutoff. A pending approval is
// never deleted, however old.
func (p *pruner) deleteApprovals(ctx context.Context, batch int, cutoff int64) (int, error) {
	return p.deleteBatches(ctx, "approvals", batch, cutoff, `DELETE FROM approvals WHERE rowid IN (
		SELECT rowid FROM approvals
		WHERE state != 'pending' AND decided_at < ?1 AND used_at < ?1 LIMIT ?2)`)
}

// deleteLabels deletes, in transactions of at most batch rows, the
// session labels added before cutoff whose session has no record left in
// the trace (by session id, whatever the tenant: a label outlives its
// session's last record, never a record of its session). A session that
// is still recording keeps its labels however old they are.
func (p *pruner) deleteLabels(ctx context.Context, batch int, cutoff int64) (int, error) {
	return p.deleteBatches(ctx, "session labels", batch, cutoff, `DELETE FROM session_labels WHERE (tenant, session, label) IN (
		SELECT tenant, session, label FROM session_labels AS l
		WHERE added < ?1 AND NOT EXISTS (SELECT 1 FROM runs WHERE runs.session_id = l.session) LIMIT ?2)`)
}

// deleteBatches runs query (a DELETE of at most ?2 rows older than ?1)
// under the write mutex until it deletes fewer than batch rows, pausing
// between transactions so the record writer is never held for long; it
// returns how many rows it deleted.
func (p *pruner) deleteBatches(ctx context.Context, what string, batch int, cutoff int64, query string) (int, error) {
	total := 0
	for {
		p.txMu.Lock()
		res, err := p.db.ExecContext(ctx, query, cutoff, batch)
		p.txMu.Unlock()
		if err != nil {
			return total, fmt.Errorf("sqlite: prune %s: %w", what, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("sqlite: prune %s: %w", what, err)
		}
		total += int(n)
		if int(n) < batch {
			return total, nil
		}
		select {
		case <-ctx.Done():
			return total, ctx.Err()
		case <-time.After(pruneYield):
		}
	}
}

// queryer is a *sql.Tx or *sql.DB.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// liveStart is the blob offset of the oldest record, or the blob file's
// end when there is none (under the write lock, nothing is being appended).
func liveStart(ctx context.Context, q queryer, blobPath string) (int64, error) {
	var off int64
	err := q.QueryRowContext(ctx, `SELECT blob_off FROM runs ORDER BY rowid LIMIT 1`).Scan(&off)
	if errors.Is(err, sql.ErrNoRows) {
		fi, serr := os.Stat(blobPath)
		if serr != nil {
			return 0, fmt.Errorf("sqlite: prune: %w", serr)
		}
		return fi.Size(), nil
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite: prune: %w", err)
	}
	return off, nil
}

// size is the trace's size: live database pages and live blob bytes.
func (p *pruner) size(ctx context.Context) (int64, error) {
	var pages, free, psize int64
	if err := p.db.QueryRowContext(ctx, `SELECT (SELECT page_count FROM pragma_page_count), (SELECT freelist_count FROM pragma_freelist_count), (SELECT page_size FROM pragma_page_size)`).Scan(&pages, &free, &psize); err != nil {
		return 0, fmt.Errorf("sqlite: prune: size: %w", err)
	}
	start, err := liveStart(ctx, p.db, p.blobPath)
	if err != nil {
		return 0, err
	}
	fi, err := os.Stat(p.blobPath)
	if err != nil {
		return 0, fmt.Errorf("sqlite: prune: %w", err)
	}
	return (pages-free)*psize + max(fi.Size()-start, 0), nil
}
