package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
)

// Mem is an in-memory audit.Store for tests. It meets the Store contract
// (TestMemStore runs the suite against it), keeps records in recording order
// for tests to inspect, and, while Err is set, fails every Record with it, as
// a full disk would. It is a approval.ApprovalStore (memapprovals.go) and a
// acsstate.Store (memacs.go) too.
type Mem struct {
	approvals  // the approval.ApprovalStore (memapprovals.go)
	agbomRules // the agbom.Store (memagbom.go)
	fleetRules // the registry.Store and audit.CursorStore (memfleet.go)
	acsRules   // the acsstate.Store (memacs.go)
	labelRules // the labels.Store (memlabels.go)

	d      *memData
	mu     sync.Mutex
	closed bool
	// Err, when set, is returned by every Record (the record is not kept).
	Err error
}

// memData is what a Mem keeps; it outlives Close, as a database would.
type memData struct {
	mu   sync.Mutex
	recs []audit.Record           // in recording order
	gen  int                      // bumped by Reset
	appr *memApprovals            // memapprovals.go; made by newMem
	acs  *memACS                  // memacs.go; nil until first used
	lbl  map[memLabelKey][]string // memlabels.go; nil until first used
	bom  *memAgBOM                // memagbom.go; nil until first used
	flt  *memFleet                // memfleet.go; nil until first used
}

var _ audit.Store = (*Mem)(nil)

// NewMem returns an empty store.
func NewMem() *Mem { return newMem(&memData{}) }

// Reopen returns a new handle on m's records, as reopening a database would.
func (m *Mem) Reopen() *Mem { return newMem(m.d) }

// newMem returns a handle on d.
func newMem(d *memData) *Mem {
	if d.appr == nil { // a new d, not shared yet
		d.appr = &memApprovals{byID: map[string]*approval.Approval{}}
	}
	m := &Mem{d: d}
	m.approvals = approval.NewRules(memApprovalRows{m, d.appr.byID})
	m.agbomRules, m.fleetRules = newAgBOM(m), newFleet(m)
	m.acsRules, m.labelRules = newACS(m), newLabels(m)
	return m
}

// lockData takes m's locks on its shared data and returns what releases
// them: for a change, m.mu then m.d.mu, failing after Close; for a read,
// m.d.mu alone. It fails when ctx is done.
func (m *Mem) lockData(ctx context.Context, change bool) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !change {
		m.d.mu.Lock()
		return m.d.mu.Unlock, nil
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, errors.New("closed")
	}
	m.d.mu.Lock()
	return func() { m.d.mu.Unlock(); m.mu.Unlock() }, nil
}

// Record keeps a copy of r.
func (m *Mem) Record(ctx context.Context, r *audit.Record) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("not recorded: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return errors.New("closed")
	}
	if m.Err != nil {
		return m.Err
	}
	c := clone(r)
	c.Time = r.Time.Truncate(time.Microsecond).UTC()
	m.d.mu.Lock()
	m.d.recs = append(m.d.recs, *c)
	m.d.mu.Unlock()
	return nil
}

// Scan visits the matching records in recording order, newest first unless
// q.Oldest. It holds no lock while fn runs.
func (m *Mem) Scan(ctx context.Context, q audit.Query, fn func(*audit.Record) bool) error {
	// Records are only ever appended (Reset starts a new slice), so the
	// records of this snapshot do not change under us.
	m.d.mu.Lock()
	recs, gen := m.d.recs, m.d.gen
	m.d.mu.Unlock()
	match := q.Matcher()
	start, scanned := time.Now(), 0
	i, step := len(recs)-1, -1
	if q.Oldest {
		i, step = 0, 1
	}
	if q.After != "" {
		at := len(recs) - 1 // with duplicate ids, the later record, as in sqlite
		for at >= 0 && recs[at].ID != q.After {
			at--
		}
		if at < 0 {
			return fmt.Errorf("storetest: %w: %q", audit.ErrUnknownCursor, q.After)
		}
		i = at + step
	}
	for ; i >= 0; i += step {
		if q.Oldest && i >= len(recs) {
			// Oldest first, records added meanwhile come at the end.
			m.d.mu.Lock()
			if m.d.gen == gen {
				recs = m.d.recs
			}
			m.d.mu.Unlock()
			if i >= len(recs) {
				break
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		r := &recs[i]
		scanned++
		if match(r) && !fn(clone(r)) {
			return nil
		}
		if q.Budget > 0 && time.Since(start) >= q.Budget && m.more(recs, gen, i+step) {
			return &audit.ScanStopped{After: r.ID, Scanned: scanned}
		}
	}
	return ctx.Err()
}

// more reports whether a scan has a record left at i (recs, of generation
// gen, may have grown since).
func (m *Mem) more(recs []audit.Record, gen, i int) bool {
	if i < 0 {
		return false
	}
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	return i < len(recs) || (m.d.gen == gen && i < len(m.d.recs))
}

// clone returns a deep copy of r.
func clone(r *audit.Record) *audit.Record {
	c := *r
	c.ReasonCodes = slices.Clone(r.ReasonCodes)
	c.Results = append([]warden.Result{}, r.Results...)
	c.Input, c.Output, c.Views = slices.Clone(r.Input), slices.Clone(r.Output), slices.Clone(r.Views)
	c.Sealed = slices.Clone(r.Sealed)
	if len(c.Sealed) == 0 {
		c.Sealed = nil // as the stores give it: none is nil
	}
	return &c
}

// Records returns every record in recording order.
func (m *Mem) Records() []audit.Record {
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	return slices.Clone(m.d.recs)
}

// Reset forgets every record (not the approvals).
func (m *Mem) Reset() {
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	m.d.recs = nil
	m.d.gen++
}

// Close makes later Records fail; the records stay readable.
func (m *Mem) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	return nil
}
