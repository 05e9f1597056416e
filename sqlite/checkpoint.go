package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"sync/atomic"
	"time"
)

// Checkpointing moves committed pages from the WAL back into the database
// file. SQLite's automatic checkpoint runs inside the COMMIT that crosses its
// threshold, so every decision waiting on that batch would wait for the copy
// of thousands of pages (measured: 6–25 ms, the whole p99 under load). The
// writer connection therefore runs with wal_autocheckpoint off, and
//
//   - a background goroutine with its own connection runs PASSIVE
//     checkpoints, which copy pages while the writer keeps committing;
//   - because a PASSIVE checkpoint racing a busy writer never quite finishes,
//     and the WAL restarts from its beginning only after a finished one, the
//     writer tops it up itself between batches once the background copy has
//     caught up to within topUpFrames: that copy is small, and the next
//     write transaction then starts over at the beginning of the WAL;
//   - if the WAL still grows past hardCapFrames (a reader holding an old
//     snapshot, a checkpointer that cannot keep up), the writer checkpoints
//     in line, trading latency for a bounded file.
//
// A top-up stalls the writer, and every decision waiting on it, for its
// copy and two fsyncs (1–4 ms measured), so the WAL grows to topUpMinFrames
// before the writer restarts it: at 2,048 frames (8 MiB at 4 KiB pages)
// instead of 256, the writer's stalls in 12 s of bench/compare.sh load fell
// from 2.18 to 1.08 s under ACS and from ~0.46 to 0.08 s under AOS, and ACS
// won four alternating pairs (5,146 → 5,492 steps/s on the means) while the
// AOS pairs were even (p99 the same or lower).
const (
	checkpointEvery = 10 * time.Millisecond
	topUpMinFrames  = 2048  // below this the WAL is left to grow (8 MiB at 4 KiB pages)
	topUpFrames     = 128   // the writer tops up when at most this many are left
	hardCapFrames   = 16384 // 64 MiB at 4 KiB pages
)

// checkpointer runs background checkpoints on its own connection.
type checkpointer struct {
	db   *sql.DB
	stop chan struct{}
	done chan struct{}
	// From the last checkpoint, by whoever ran it: frames in the WAL and
	// frames already copied into the database.
	logFrames, doneFrames atomic.Int64
	runs                  atomic.Uint64 // checkpoints this goroutine ran
}

// startCheckpointer connects to the database before it returns (a
// connection opened later, after the file was deleted, would create a new
// empty one in its place) and starts the goroutine.
func startCheckpointer(db *sql.DB) *checkpointer {
	c := &checkpointer{db: db, stop: make(chan struct{}), done: make(chan struct{})}
	// A tick with nothing committed since a checkpoint that finished
	// skips it, so an idle store does not run one a hundred times a
	// second. PRAGMA data_version tells: on one connection it changes
	// whenever any other connection, of this process or another, commits
	// (the writer, the approvals and ACS connection, a hook). Both
	// statements are prepared once, on a connection held for the
	// goroutine's life; without it (an error) every tick checkpoints.
	ctx := context.Background()
	var st ckptStmts
	st.query = db.QueryRowContext // the pool's one connection (not held)
	if conn, err := db.Conn(ctx); err == nil {
		st.conn, st.query = conn, conn.QueryRowContext
		st.version, _ = conn.PrepareContext(ctx, "PRAGMA data_version")
		st.ckpt, _ = conn.PrepareContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
	}
	go c.run(st)
	return c
}

// ckptStmts are the checkpointer's connection and statements (nil when
// they could not be had).
type ckptStmts struct {
	conn          *sql.Conn
	query         func(ctx context.Context, query string, args ...any) *sql.Row
	version, ckpt *sql.Stmt
}

func (st *ckptStmts) close() {
	for _, s := range []*sql.Stmt{st.version, st.ckpt} {
		if s != nil {
			s.Close()
		}
	}
	if st.conn != nil {
		st.conn.Close()
	}
}

func (c *checkpointer) run(st ckptStmts) {
	defer close(c.done)
	defer st.close()
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	ctx := context.Background()
	version, ckpt, query := st.version, st.ckpt, st.query
	var seen int64 = -1
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			if version != nil {
				var v int64
				if err := version.QueryRowContext(ctx).Scan(&v); err == nil {
					if v == seen && c.logFrames.Load() == c.doneFrames.Load() {
						continue // nothing new since a checkpoint that finished
					}
					seen = v
				}
			}
			var busy, log, done int64
			var row *sql.Row
			if ckpt != nil {
				row = ckpt.QueryRowContext(ctx)
			} else {
				row = query(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
			}
			if err := row.Scan(&busy, &log, &done); err == nil && log >= 0 {
				c.logFrames.Store(log)
				c.doneFrames.Store(done)
			}
			c.runs.Add(1)
		}
	}
}

// close stops the goroutine and closes its connection.
func (c *checkpointer) close() error {
	close(c.stop)
	<-c.done
	return c.db.Close()
}

// afterCommit is called by the writer between batches: it tops up a nearly
// finished background checkpoint (so the WAL restarts) or enforces the cap.
func (s *Store) afterCommit() {
	c := s.ckpt
	if c == nil {
		return
	}
	log, done := c.logFrames.Load(), c.doneFrames.Load()
	if log < topUpMinFrames || (log-done > topUpFrames && log < hardCapFrames) {
		return
	}
	// With a trace log the writer (its ACS calls) shares the connection.
	s.txMu.Lock()
	defer s.txMu.Unlock()
	if s.conn == nil {
		return
	}
	var busy, l, d int64
	err := s.conn.Raw(func(dc any) error {
		rows, err := dc.(driver.QueryerContext).QueryContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)", nil)
		if err != nil {
			return err
		}
		defer rows.Close()
		vals := make([]driver.Value, 3)
		if err := rows.Next(vals); err != nil {
			return err
		}
		for i, p := range []*int64{&busy, &l, &d} {
			v, ok := vals[i].(int64)
			if !ok {
				return fmt.Errorf("wal_checkpoint: unexpected %T", vals[i])
			}
			*p = v
		}
		return nil
	})
	if err == nil {
		// Finished: the WAL restarts with the next transaction.
		if l == d {
			l, d = 0, 0
		}
		c.logFrames.Store(l)
		c.doneFrames.Store(d)
	}
}
