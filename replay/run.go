package replay

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/unseal"
)

// batchSize is how many records the scan hands a worker at once.
const batchSize = 64

// Run replays the records q selects from st, oldest first (q.Oldest is
// set), and returns the report. Records of surface approval (an
// approval's own decision) and unseal (an unseal or erasure of originals)
// are not steps an agent took: they are counted and skipped. With
// WithOriginals, each record is decided on its originals. The scan streams the trace (one chunk of rows in memory);
// the records are decided by GOMAXPROCS workers beside it, so reading the
// trace and deciding overlap. Only the changed records are kept, for the
// report.
//
// An error is a record that cannot be read, or the scan's: the report is
// then nil.
func (r *Replayer) Run(ctx context.Context, st audit.Store, q audit.Query) (*Report, error) {
	q.Oldest = true
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	type batch struct {
		seq  int // the first record's position in the scan
		recs []*audit.Record
	}
	workers := runtime.GOMAXPROCS(0)
	in := make(chan batch, 2*workers)
	tallies := make([]*tally, workers)
	var wg sync.WaitGroup
	for i := range tallies {
		t := newTally()
		tallies[i] = t
		wg.Go(func() {
			for b := range in {
				if ctx.Err() != nil {
					continue // drain
				}
				for j, rec := range b.recs {
					dec, o := r.reveal(ctx, rec)
					out, err := r.Replay(ctx, dec)
					if err != nil {
						cancel(err)
						break
					}
					t.add(r, rec, dec, &o, &out, b.seq+j)
				}
			}
		})
	}

	skipped, unsealed, seq := 0, 0, 0
	cur := batch{recs: make([]*audit.Record, 0, batchSize)}
	send := func() bool {
		select {
		case in <- cur:
		case <-ctx.Done():
			return false
		}
		seq += len(cur.recs)
		cur = batch{seq: seq, recs: make([]*audit.Record, 0, batchSize)}
		return true
	}
	err := st.Scan(ctx, q, func(rec *audit.Record) bool {
		switch rec.Surface {
		case warden.SurfaceApproval:
			skipped++
			return true
		case unseal.Surface:
			unsealed++
			return true
		}
		cur.recs = append(cur.recs, rec)
		return len(cur.recs) < batchSize || send()
	})
	if err == nil && len(cur.recs) > 0 {
		send()
	}
	close(in)
	wg.Wait()
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return nil, cause // a record that could not be read
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	total := merge(tallies)
	total.sum.SkippedApprovals = skipped
	total.sum.SkippedUnseal = unsealed
	return total.report(r.Policies().Revision()), nil
}

// merge adds the workers' tallies up, the changed records in scan order.
func merge(ts []*tally) *tally {
	out := newTally()
	for _, t := range ts {
		out.sum.Replayed += t.sum.Replayed
		out.sum.Changed += t.sum.Changed
		out.sum.Redacted += t.sum.Redacted
		out.sum.Shadow.Records += t.sum.Shadow.Records
		out.sum.Shadow.Disagree += t.sum.Shadow.Disagree
		out.sum.Originals.add(t.sum.Originals)
		for k, n := range t.trans {
			out.trans[k] += n
		}
		for k, n := range t.shadow {
			out.shadow[k] += n
		}
		for id, d := range t.pol {
			p := out.pol[id]
			if p == nil {
				p = &PolicyDelta{Policy: id}
				out.pol[id] = p
			}
			p.NewlyMatched += d.NewlyMatched
			p.Unmatched += d.Unmatched
			p.Changed += d.Changed
		}
		out.changes = append(out.changes, t.changes...)
	}
	slices.SortFunc(out.changes, func(a, b Change) int { return a.seq - b.seq })
	return out
}
