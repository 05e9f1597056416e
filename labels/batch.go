package labels

import (
	"context"
	"slices"
	"sync"
)

// Batch groups the label reads of a store other processes write, where no
// read may be answered from anything older than its step (a label another
// replica added must count at this replica's next step): a read asked
// while none runs starts a query, and the reads asked while it runs wait
// for the next, which answers them all (at most MaxBatch sessions), as the
// trace writer's group commit does. A read thus joins only a query that
// has not started yet: it is exactly as fresh as its own query would be.
// The zero value is ready to use.
type Batch struct {
	mu      sync.Mutex
	pending []*batchRead
	running bool // a goroutine answers the pending reads
}

// Key names a session: its tenant and id.
type Key struct{ Tenant, Session string }

// ReadMany reads the labels of distinct sessions with one query; a session
// without labels may be missing. Its context is no one caller's (a caller
// that gives up does not fail the others' reads): ReadMany bounds it.
type ReadMany func(ctx context.Context, keys []Key) (map[Key][]string, error)

// MaxBatch bounds the sessions one ReadMany reads.
const MaxBatch = 256

// batchRead is one read; its answer is set before done is closed.
type batchRead struct {
	key    Key
	ctx    context.Context
	labels []string
	err    error
	done   chan struct{}
}

// Read returns the labels of key (nil: none), read by many together with
// the reads asked at the same time.
func (b *Batch) Read(ctx context.Context, key Key, many ReadMany) ([]string, error) {
	r := &batchRead{key: key, ctx: ctx, done: make(chan struct{})}
	b.mu.Lock()
	b.pending = append(b.pending, r)
	if !b.running {
		b.running = true
		go b.run(many)
	}
	b.mu.Unlock()
	select {
	case <-r.done:
		return r.labels, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// run answers the pending reads, a batch at a time, until none is left.
func (b *Batch) run(many ReadMany) {
	for {
		b.mu.Lock()
		n := min(len(b.pending), MaxBatch)
		batch := b.pending[:n:n]
		if b.pending = b.pending[n:]; n == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		answer(batch, many)
	}
}

// answer reads the sessions of batch's reads with one call of many and
// answers each; a read whose caller gave up gets its context's error.
func answer(batch []*batchRead, many ReadMany) {
	var live context.Context
	var keys []Key
	seen := map[Key]bool{}
	for _, r := range batch {
		if r.ctx.Err() == nil && !seen[r.key] {
			seen[r.key], live, keys = true, r.ctx, append(keys, r.key)
		}
	}
	var got map[Key][]string
	var err error
	if live != nil {
		got, err = many(context.WithoutCancel(live), keys)
	}
	for _, r := range batch {
		switch {
		case r.ctx.Err() != nil:
			r.err = r.ctx.Err()
		case err != nil:
			r.err = err
		default:
			r.labels = slices.Clone(got[r.key])
		}
		close(r.done)
	}
}
