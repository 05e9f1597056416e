package postgres

import (
	"context"
	"slices"
	"sync"
)

// Session labels are read at every step of a session, and replicas share
// them: a label another replica added must count at this replica's next
// step, so no read may be answered from anything older than the step.
// Rather than one query per step, the reads that arrive together share
// one: SessionLabels queues its read, and one reader goroutine at a time
// takes every read queued so far and answers them all with one query
// (group read, as the trace writer's group commit). A read joins only a
// query that has not started yet, so each is answered from a snapshot
// taken after it was asked: exactly as fresh as its own query would be.

// maxLabelReads bounds the sessions one query reads; reads beyond wait for
// the next query.
const maxLabelReads = 256

// labelReader queues the SessionLabels calls waiting for a query.
type labelReader struct {
	mu      sync.Mutex
	pending []*labelRead
	running bool // a reader goroutine runs
}

// labelRead is one SessionLabels call: its key as PostgreSQL keeps it
// (pgArgs), and its answer, set before done is closed.
type labelRead struct {
	tenant, session string
	ctx             context.Context
	labels          []string
	err             error
	done            chan struct{}
}

// readLabels queues a read of the session's labels and waits for it.
func (s *Store) readLabels(ctx context.Context, tenant, session string) ([]string, error) {
	a := pgArgs(tenant, session)
	r := &labelRead{tenant: a[0].(string), session: a[1].(string), ctx: ctx, done: make(chan struct{})}
	lr := &s.labels
	lr.mu.Lock()
	lr.pending = append(lr.pending, r)
	if !lr.running {
		lr.running = true
		go s.labelReads()
	}
	lr.mu.Unlock()
	select {
	case <-r.done:
		return r.labels, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// labelReads answers the queued reads, a query at a time, until none is
// left.
func (s *Store) labelReads() {
	lr := &s.labels
	for {
		lr.mu.Lock()
		batch := lr.pending
		if len(batch) > maxLabelReads {
			batch = batch[:maxLabelReads:maxLabelReads]
			lr.pending = lr.pending[maxLabelReads:]
		} else {
			lr.pending = nil
		}
		if len(batch) == 0 {
			lr.running = false
			lr.mu.Unlock()
			return
		}
		lr.mu.Unlock()
		s.readBatch(batch)
	}
}

// readBatch reads the labels of batch's sessions with one query and
// answers each read.
func (s *Store) readBatch(batch []*labelRead) {
	type key struct{ tenant, session string }
	live := batch[:0:0]
	var first context.Context
	seen := map[key]bool{}
	var tenants, sessions []string
	for _, r := range batch {
		if r.ctx.Err() != nil {
			r.err = r.ctx.Err()
			close(r.done)
			continue
		}
		live = append(live, r)
		if first == nil {
			first = r.ctx
		}
		k := key{r.tenant, r.session}
		if !seen[k] {
			seen[k] = true
			tenants, sessions = append(tenants, r.tenant), append(sessions, r.session)
		}
	}
	if len(live) == 0 {
		return
	}
	// The query is bounded by the state timeout, not by any one caller's
	// context: a caller that gives up does not fail the others' reads.
	ctx, cancel := s.stateCtx(context.WithoutCancel(first))
	defer cancel()
	got := map[key][]string{}
	rows, err := s.statePool().Query(ctx, `SELECT l.tenant, l.session, l.label
		FROM unnest($1::text[], $2::text[]) AS k(tenant, session)
		JOIN session_labels l ON l.tenant = k.tenant AND l.session = k.session
		ORDER BY l.tenant, l.session, l.label`, tenants, sessions)
	if err == nil {
		for rows.Next() {
			var k key
			var l string
			if err = rows.Scan(&k.tenant, &k.session, &l); err != nil {
				break
			}
			got[k] = append(got[k], l)
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	for _, r := range live {
		if err != nil {
			r.err = stateErr(ctx, "read session labels", err)
		} else {
			r.labels = slices.Clone(got[key{r.tenant, r.session}]) // nil for none
		}
		close(r.done)
	}
}
