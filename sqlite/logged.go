package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/wardenhq/warden/internal/seglog"
	"github.com/wardenhq/warden/internal/tracesql"
)

// # The trace log (Options.Log)
//
// With Options.Log the durable point of a record is not its SQLite commit
// but its append to a segment log, DIR/trace.log (internal/seglog): the
// writer goroutine appends each batch of encoded records with one write
// (and an fdatasync with Synchronous "full", as SQLite's commit would
// have), answers the batch's Records, and hands the batch to an indexer
// goroutine, which inserts the rows (blobs, hash chain and all, as
// without the log) in larger transactions behind the answers. The row of
// each transaction's last record's log sequence number is kept in
// trace_log (schema 14) in that same transaction, so Open indexes exactly
// the log's records after it: a record answered before a kill -9 is in
// runs after the next Open. Readers of this Store (Scan, Verify, Prune)
// first wait until every record appended before they began is indexed,
// so the Store reads its own writes; other processes see a record once it
// is indexed (milliseconds behind under load). A process that opens the
// directory without Options.Log (warden runs, a hook) writes rows
// directly, chained after the head the indexer reads in its own
// transaction, so the chain stays one.
//
// A record's id is checked before it is answered (against the records
// waiting to be indexed and against runs), so that a duplicate is refused
// as without the log and never answered and then dropped. The records
// appended and not yet indexed are bounded (MaxUnindexed, maxUnindexedBytes):
// past it, as when the indexer keeps failing (a full disk), Record fails
// closed.

// LogDirName is the directory of the trace log inside a trace directory.
const LogDirName = "trace.log"

// DefaultMaxUnindexed is Options.MaxUnindexed's default: records answered
// and not yet indexed.
const DefaultMaxUnindexed = 16384

// maxUnindexedBytes bounds the bytes of the records waiting for the
// indexer (their copies in memory).
const maxUnindexedBytes = 64 << 20

// maxIndexBatch is the most records the indexer inserts in one
// transaction; indexGather how long it waits for more while fewer than
// half of that are waiting and no reader waits.
const (
	maxIndexBatch = 1024
	indexGather   = 5 * time.Millisecond
)

// logState is the trace log's side of a Store.
type logState struct {
	log *seglog.Log
	max int // Options.MaxUnindexed

	// Owned by the writer goroutine.
	idConn   *sql.Conn // a reader connection for idsTaken, and its statement
	idStmt   *sql.Stmt
	enc      []byte
	offs     []int
	payloads [][]byte
	seen     map[string]bool
	sinceCut int

	mu       sync.Mutex
	queue    []*logBatch // appended, waiting for the indexer, oldest first
	qRecords int
	qBytes   int
	appended uint64 // the last sequence number appended
	indexed  uint64 // the last sequence number indexed
	err      error  // the indexer's last error; nil once it succeeds again
	pending  map[string]struct{}
	moved    chan struct{} // closed (and replaced) when indexed or err changes
	wake     chan struct{} // buffered 1: work for the indexer
	closing  bool
	hurry    bool          // a reader waits: index without gathering
	done     chan struct{} // closed when the indexer has exited
	replayed uint64        // records Open indexed from the log
}

// logBatch is a batch appended to the log: its records' payloads (a copy
// the indexer owns) and ids.
type logBatch struct {
	first    uint64
	payloads [][]byte
	ids      []string
	bytes    int
}

// logSync is the log's durability for the store's Synchronous mode: what
// SQLite's commit gives in that mode (normal: survives the process, not a
// power loss; full: fdatasync before the answer).
func logSync(syncMode string) seglog.Sync {
	if syncMode == "FULL" {
		return seglog.SyncAlways
	}
	return seglog.SyncNone
}

// openLog opens the trace log and indexes what it holds beyond trace_log's
// position; called by Open before the writer starts.
func (s *Store) openLog() error {
	ctx := context.Background()
	var indexed int64
	if err := s.conn.QueryRowContext(ctx, `SELECT indexed FROM trace_log`).Scan(&indexed); err != nil { // the writer's connection: the writer has not started
		return fmt.Errorf("sqlite: read the trace log's position: %w", err)
	}
	l, err := seglog.Open(filepath.Join(s.dir, LogDirName), seglog.Options{Sync: logSync(s.syncMode), First: uint64(indexed) + 1})
	if err != nil {
		return fmt.Errorf("sqlite: trace log: %w", err)
	}
	last := l.Next() - 1
	switch {
	case last < uint64(indexed):
		l.Close()
		return fmt.Errorf("sqlite: the trace log %s ends at record %d but the trace indexed it up to %d: it is not this trace's log (move it away to start a new one)",
			filepath.Join(s.dir, LogDirName), last, indexed)
	case last > uint64(indexed) && l.First() > uint64(indexed)+1:
		l.Close()
		return fmt.Errorf("sqlite: the trace log %s starts at record %d but the trace indexed it only up to %d: records %d to %d are lost",
			filepath.Join(s.dir, LogDirName), l.First(), indexed, indexed+1, l.First()-1)
	}
	lg := &logState{log: l, max: s.opts.MaxUnindexed, seen: map[string]bool{}, pending: map[string]struct{}{},
		moved: make(chan struct{}), wake: make(chan struct{}, 1), done: make(chan struct{})}
	s.lg = lg
	if last > uint64(indexed) {
		if err := s.replayLog(uint64(indexed)+1, last); err != nil {
			s.lg = nil
			l.Close()
			return err
		}
	}
	lg.appended, lg.indexed, lg.replayed = last, last, last-uint64(indexed)
	if _, err := l.Truncate(last + 1); err != nil {
		s.lg = nil
		l.Close()
		return fmt.Errorf("sqlite: trace log: %w", err)
	}
	go s.index()
	return nil
}

// replayLog indexes the log's records from..to (after a crash: answered,
// not yet indexed).
func (s *Store) replayLog(from, to uint64) error {
	r, err := s.lg.log.Reader(from)
	if err != nil {
		return fmt.Errorf("sqlite: trace log: %w", err)
	}
	defer r.Close()
	var b []*request
	flush := func(last uint64) error {
		if len(b) == 0 {
			return nil
		}
		if err := s.write(b, last); err != nil {
			return fmt.Errorf("sqlite: index the trace log's records up to %d: %w", last, err)
		}
		for _, q := range b {
			if q.err != nil {
				return fmt.Errorf("sqlite: index the trace log's records up to %d: %w", last, q.err)
			}
		}
		b = b[:0]
		return nil
	}
	for seq := from; seq <= to; seq++ {
		got, p, err := r.Next()
		if err != nil {
			return fmt.Errorf("sqlite: trace log record %d: %w", seq, err)
		}
		if got != seq {
			return fmt.Errorf("sqlite: trace log: read record %d, want %d", got, seq)
		}
		// The Reader reuses its buffer: the request keeps a copy.
		q, err := decodeLogged(append([]byte(nil), p...))
		if err != nil {
			return fmt.Errorf("sqlite: trace log record %d: %w", seq, err)
		}
		b = append(b, q)
		if len(b) == maxIndexBatch {
			if err := flush(seq); err != nil {
				return err
			}
		}
	}
	return flush(to)
}

// cutLog removes, now and then, the log's segments all of whose records
// are indexed (the writer goroutine's, after each batch).
func (s *Store) cutLog() {
	lg := s.lg
	if lg.sinceCut++; lg.sinceCut < 256 {
		return
	}
	lg.sinceCut = 0
	lg.mu.Lock()
	upto := lg.indexed
	lg.mu.Unlock()
	_, _ = lg.log.Truncate(upto + 1)
}

// appendLogged refuses the records of b whose ids are taken (r.err),
// appends the others to the log in one batch and queues them for the
// indexer (the writer's store with a trace log, see commit). An error
// fails the whole batch (nothing appended).
func (s *Store) appendLogged(b []*request) error {
	lg := s.lg
	clear(lg.seen)
	ids := make([]string, 0, len(b))
	for _, r := range b {
		ids = append(ids, r.args[0].Value.(string))
	}
	taken, err := s.idsTaken(ids)
	if err != nil {
		return err
	}
	lg.mu.Lock()
	for i, r := range b {
		id := ids[i]
		_, waiting := lg.pending[id]
		if waiting || lg.seen[id] || taken[id] {
			r.err = fmt.Errorf("sqlite: record rejected: id %q is already in the trace", id)
			continue
		}
		lg.seen[id] = true
	}
	ierr, behind, qBytes := lg.err, lg.qRecords, lg.qBytes
	lg.mu.Unlock()
	if behind >= lg.max || qBytes >= maxUnindexedBytes {
		if ierr != nil {
			return fmt.Errorf("sqlite: record not stored: %d records wait to be indexed and the indexer fails: %w", behind, ierr)
		}
		return fmt.Errorf("sqlite: record not stored: %d records (%d bytes) wait to be indexed", behind, qBytes)
	}
	lg.enc, lg.offs, lg.payloads = lg.enc[:0], lg.offs[:0], lg.payloads[:0]
	var keep []string
	for i, r := range b {
		if r.err != nil {
			continue
		}
		lg.offs = append(lg.offs, len(lg.enc))
		lg.enc = appendLogged(lg.enc, r)
		keep = append(keep, ids[i])
	}
	if len(keep) == 0 {
		return nil
	}
	lg.offs = append(lg.offs, len(lg.enc))
	for i := range keep {
		lg.payloads = append(lg.payloads, lg.enc[lg.offs[i]:lg.offs[i+1]])
	}
	first, err := lg.log.Append(lg.payloads)
	if err != nil {
		return fmt.Errorf("sqlite: record not stored: trace log: %w", err)
	}
	// The indexer's copy: one allocation for the batch.
	own := append([]byte(nil), lg.enc...)
	lb := &logBatch{first: first, ids: keep, bytes: len(own), payloads: make([][]byte, len(keep))}
	for i := range keep {
		lb.payloads[i] = own[lg.offs[i]:lg.offs[i+1]:lg.offs[i+1]]
	}
	lg.mu.Lock()
	lg.queue = append(lg.queue, lb)
	lg.qRecords += len(keep)
	lg.qBytes += len(own)
	lg.appended = first + uint64(len(keep)) - 1
	for _, id := range keep {
		lg.pending[id] = struct{}{}
	}
	lg.mu.Unlock()
	select {
	case lg.wake <- struct{}{}:
	default:
	}
	if len(lg.enc) > tracesql.MaxBatchBytes {
		lg.enc = nil
	}
	return nil
}

// idsTaken returns which of ids are in runs already.
func (s *Store) idsTaken(ids []string) (map[string]bool, error) {
	arr, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("sqlite: record not stored: %w", err)
	}
	lg := s.lg
	if lg.idStmt == nil {
		ctx := context.Background()
		c, err := s.rdb.Conn(ctx)
		if err != nil {
			return nil, fmt.Errorf("sqlite: record not stored: check ids: %w", err)
		}
		st, err := c.PrepareContext(ctx, `SELECT id FROM runs WHERE id IN (SELECT value FROM json_each(?))`)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("sqlite: record not stored: check ids: %w", err)
		}
		lg.idConn, lg.idStmt = c, st
	}
	rows, err := lg.idStmt.Query(string(arr))
	if err != nil {
		return nil, fmt.Errorf("sqlite: record not stored: check ids: %w", err)
	}
	defer rows.Close()
	var taken map[string]bool
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("sqlite: record not stored: check ids: %w", err)
		}
		if taken == nil {
			taken = map[string]bool{}
		}
		taken[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: record not stored: check ids: %w", err)
	}
	return taken, nil
}

// index is the indexer goroutine: it inserts the appended batches' rows,
// up to maxIndexBatch records a transaction, until the store closes and
// everything appended is indexed (or the indexer fails on close: the log
// keeps those records for the next Open).
func (s *Store) index() {
	lg := s.lg
	defer close(lg.done)
	backoff := time.Duration(0)
	for {
		lg.mu.Lock()
		for len(lg.queue) == 0 && !lg.closing {
			lg.mu.Unlock()
			<-lg.wake
			lg.mu.Lock()
		}
		if len(lg.queue) == 0 {
			lg.mu.Unlock()
			return
		}
		if !lg.closing && lg.qRecords < maxIndexBatch/2 && !lg.hurry {
			// Let a larger batch gather: each transaction costs the same
			// whatever its size (its WAL frames), and nothing waits for
			// the rows but a reader of this Store (caughtUp hurries it).
			lg.mu.Unlock()
			time.Sleep(indexGather)
			lg.mu.Lock()
		}
		lg.hurry = false
		var take []*logBatch
		n := 0
		for _, lb := range lg.queue {
			if n > 0 && n+len(lb.payloads) > maxIndexBatch {
				break
			}
			take = append(take, lb)
			n += len(lb.payloads)
		}
		closing := lg.closing
		lg.mu.Unlock()

		reqs := make([]*request, 0, n)
		var err error
		for _, lb := range take {
			for _, p := range lb.payloads {
				q, derr := decodeLogged(p)
				if derr != nil {
					err = derr
					break
				}
				reqs = append(reqs, q)
			}
		}
		last := take[len(take)-1].first + uint64(len(take[len(take)-1].payloads)) - 1
		if err == nil {
			err = s.write(reqs, last)
		}
		if err == nil {
			s.afterCommit()
			for _, q := range reqs {
				if q.err != nil { // cannot happen: ids were checked before the answer
					s.nFailed.Add(1)
				}
			}
		}
		lg.mu.Lock()
		if err != nil {
			lg.err = err
		} else {
			lg.err = nil
			lg.queue = lg.queue[len(take):]
			lg.qRecords -= n
			for _, lb := range take {
				lg.qBytes -= lb.bytes
				for _, id := range lb.ids {
					delete(lg.pending, id)
				}
			}
			lg.indexed = last
		}
		close(lg.moved)
		lg.moved = make(chan struct{})
		lg.mu.Unlock()
		if err == nil {
			backoff = 0
			continue
		}
		if closing && backoff >= time.Second {
			return // the log keeps them: the next Open indexes them
		}
		backoff = min(max(2*backoff, 10*time.Millisecond), time.Second)
		time.Sleep(backoff)
	}
}

// caughtUp waits until every record appended before it was called is
// indexed, so that a reader of this Store sees its own writes. It fails
// at once while the indexer fails, and when ctx ends.
func (s *Store) caughtUp(ctx context.Context) error {
	lg := s.lg
	if lg == nil {
		return nil
	}
	lg.mu.Lock()
	target := lg.appended
	if lg.indexed < target {
		lg.hurry = true
	}
	for lg.indexed < target {
		if lg.err != nil {
			err := lg.err
			lg.mu.Unlock()
			return fmt.Errorf("sqlite: the trace's newest records are not indexed: %w", err)
		}
		moved := lg.moved
		lg.mu.Unlock()
		select {
		case <-moved:
		case <-ctx.Done():
			return fmt.Errorf("sqlite: the trace's newest records are not indexed yet: %w", ctx.Err())
		}
		lg.mu.Lock()
	}
	lg.mu.Unlock()
	return nil
}

// closeLog stops the indexer once it has indexed everything appended (the
// writer has exited), and closes the log.
func (s *Store) closeLog() error {
	lg := s.lg
	if lg == nil {
		return nil
	}
	lg.mu.Lock()
	lg.closing = true
	lg.mu.Unlock()
	select {
	case lg.wake <- struct{}{}:
	default:
	}
	<-lg.done
	if lg.idStmt != nil { // the writer has exited: its connection can go
		lg.idStmt.Close()
		lg.idConn.Close()
	}
	lg.mu.Lock()
	err := lg.err
	lg.mu.Unlock()
	if cerr := lg.log.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	return err
}

// The encoding of a record in the log: its content digest (32 bytes),
// then each of request.args but blob_off, prev_hash and hash (set when it
// is indexed) as a tag and a value, then the blob. An entry written before
// schema 17 has no sealed argument (the last one): decodeLogged reads it
// as having none, so a log a crash left behind is indexed after an upgrade.
const (
	tagNil byte = iota
	tagString
	tagInt
	tagBytes
)

// loggedArgs are the args a logged record carries.
func loggedArg(i int) bool { return i != blobOffArg && i != prevHashArg && i != hashArg }

func appendLogged(b []byte, r *request) []byte {
	b = append(b, r.content[:]...)
	for i := range r.args {
		if !loggedArg(i) {
			continue
		}
		switch v := r.args[i].Value.(type) {
		case nil:
			b = append(b, tagNil)
		case string:
			b = append(b, tagString)
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		case int64:
			b = append(b, tagInt)
			b = binary.AppendVarint(b, v)
		case []byte:
			b = append(b, tagBytes)
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		default:
			panic(fmt.Sprintf("sqlite: record argument %d is a %T", i, v))
		}
	}
	return append(b, r.blob...)
}

var errLogged = errors.New("sqlite: trace log record is malformed")

// decodeLogged is appendLogged's inverse; the request's slices point into p.
func decodeLogged(p []byte) (*request, error) {
	q := &request{done: make(chan error, 1)}
	for i := range q.args {
		q.args[i].Ordinal = i + 1
	}
	if len(p) < len(q.content) {
		return nil, errLogged
	}
	copy(q.content[:], p)
	p = p[len(q.content):]
	for i := range q.args {
		if !loggedArg(i) {
			continue
		}
		if len(p) == 0 {
			return nil, errLogged
		}
		if i == sealedArg && p[0] == '[' {
			// Written before schema 17: the args end at shadow and the
			// blob follows, its results first (a JSON array, never
			// empty), where a tag would be. No sealed values.
			continue
		}
		tag := p[0]
		p = p[1:]
		switch tag {
		case tagNil:
			q.args[i].Value = nil
		case tagInt:
			v, n := binary.Varint(p)
			if n <= 0 {
				return nil, errLogged
			}
			q.args[i].Value, p = v, p[n:]
		case tagString, tagBytes:
			l, n := binary.Uvarint(p)
			if n <= 0 || l > uint64(len(p)-n) {
				return nil, errLogged
			}
			v := p[n : n+int(l) : n+int(l)]
			if tag == tagString {
				q.args[i].Value = string(v)
			} else {
				q.args[i].Value = v
			}
			p = p[n+int(l):]
		default:
			return nil, errLogged
		}
	}
	q.blob = p
	q.state.Store(taken)
	return q, nil
}
