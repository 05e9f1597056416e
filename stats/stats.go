// Package stats keeps what the console's overview and policies pages chart:
// per-minute counts of the decisions of the last 24 hours, by outcome, with a
// latency histogram for p50/p99, the most denied tools and policies, and how
// often each policy matched and decided — of every decision, and apart of
// each tenant's (a tenant's viewer sees its own figures only). An Observer
// is told of every decision (it is a pipeline.Observer), so it is built to
// cost little there:
// one uncontended mutex, no allocation once a minute's keys are known, and
// memory bounded whatever the traffic.
package stats

import (
	"context"
	"math/bits"
	"sync"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
)

// Bounds of an Observer.
const (
	// Minutes is how many per-minute buckets are kept: 24 hours.
	Minutes = 24 * 60
	// MaxKeys bounds the distinct tools and policies one minute keeps; the
	// rest are counted under Other.
	MaxKeys = 256
	// Other is the key past MaxKeys distinct tools or policies in a minute.
	Other = "(other)"
	// MaxTenants bounds the tenants one minute counts apart: the decisions
	// of a tenant past them are counted in the totals only, that minute
	// (its own figures are then short, never another tenant's). Tenants
	// come from the configured tokens, so there are few; a tenant's minute
	// is about 0.5 KB, 64 tenants deciding every minute of a day 46 MB.
	MaxTenants = 64
)

// Outcomes a decision is counted under: its verdict, or Error when it could
// not be recorded (and was denied).
const (
	Allow = iota
	Modify
	Ask
	Defer
	Deny
	Error
	numOutcomes
)

// OutcomeNames names the outcomes, by index.
var OutcomeNames = [numOutcomes]string{"allow", "modify", "ask", "defer", "deny", "error"}

// Latency histogram: four buckets per power of two of microseconds, from
// under 1 µs up to 2^histOctaves µs (about 67 s); longer goes in the last.
const (
	histSub     = 4
	histOctaves = 26
	histBuckets = 1 + histOctaves*histSub
)

// counts are one minute's counts of decisions: every decision's, or one
// tenant's. Its maps are cleared, not dropped, when the minute is reused a
// day later, so a steady stream allocates nothing.
type counts struct {
	outcomes [numOutcomes]uint32
	hist     [histBuckets]uint32
	// deniedTools and deniedPolicies count denials by tool name and
	// policy id; policies counts, per policy id, [matched, decided].
	deniedTools    map[string]uint32
	deniedPolicies map[string]uint32
	policies       map[string]*[2]uint32
}

// minute is one minute's counts: every decision's, and each tenant's
// apart (callers without a tenant are in the totals only).
type minute struct {
	at int64 // unix minute this bucket holds; 0: empty
	counts
	// tenants are the counts of each tenant that decided this minute, at
	// most MaxTenants; spare are the zeroed counts of a day ago, reused.
	tenants map[string]*counts
	spare   []*counts
}

// Observer counts decisions per minute (see the package doc). It implements
// pipeline.Observer and is safe for concurrent use. The zero value is not
// usable: call New.
type Observer struct {
	now func() time.Time

	mu      sync.Mutex
	minutes [Minutes]minute
}

var _ pipeline.Observer = (*Observer)(nil)

// New returns an empty Observer reading the time from now (nil: time.Now).
func New(now func() time.Time) *Observer {
	if now == nil {
		now = time.Now
	}
	return &Observer{now: now}
}

// outcomeOf is the outcome index a decision is counted under.
func outcomeOf(out *warden.Outcome, recordErr error) int {
	if recordErr != nil {
		return Error
	}
	switch out.Verdict {
	case warden.Modify:
		return Modify
	case warden.Ask:
		return Ask
	case warden.Defer:
		return Defer
	case warden.Deny:
		return Deny
	}
	return Allow
}

// histIndex is the histogram bucket of a latency.
func histIndex(d time.Duration) int {
	us := uint64(0)
	if d > 0 {
		us = uint64(d / time.Microsecond)
	}
	if us == 0 {
		return 0
	}
	oct := bits.Len64(us) - 1 // us in [2^oct, 2^(oct+1))
	if oct >= histOctaves {
		return histBuckets - 1
	}
	var sub uint64
	if oct >= 2 {
		sub = (us >> (oct - 2)) & (histSub - 1)
	} else {
		sub = (us << (2 - oct)) & (histSub - 1)
	}
	return 1 + oct*histSub + int(sub)
}

// histUpper is the upper bound of histogram bucket i.
func histUpper(i int) time.Duration {
	if i == 0 {
		return time.Microsecond
	}
	i--
	oct, sub := i/histSub, i%histSub
	// bucket covers [2^oct * (1 + sub/4), 2^oct * (1 + (sub+1)/4)) µs
	upper := (float64(uint64(1)<<oct) * (1 + float64(sub+1)/histSub))
	return time.Duration(upper * float64(time.Microsecond))
}

// Observe counts one decision; it implements pipeline.Observer.
func (o *Observer) Observe(ev *warden.Event, out *warden.Outcome, recordErr error) {
	tool, tenant := "", ""
	if ev != nil {
		tool, tenant = ev.Tool.Name, ev.Principal.Tenant
	}
	o.observe(out, recordErr, tool, tenant)
}

// ObserveRecord counts one decision as Observe does, with the tool name of
// the record as stored (redacted: a secret used as a tool name is not
// listed among the most denied tools); it implements
// pipeline.RecordObserver.
func (o *Observer) ObserveRecord(_ context.Context, ev *warden.Event, out *warden.Outcome, rec *audit.Record, recordErr error) {
	if rec == nil {
		o.Observe(ev, out, recordErr)
		return
	}
	o.observe(out, recordErr, rec.Tool, rec.Tenant)
}

// observe counts one decision of tenant ("" for none) with the tool name
// tool.
func (o *Observer) observe(out *warden.Outcome, recordErr error, tool, tenant string) {
	at := o.now().Unix() / 60
	oc := outcomeOf(out, recordErr)
	h := histIndex(out.Latency)
	o.mu.Lock()
	m := &o.minutes[at%Minutes]
	if m.at != at {
		m.reset(at)
	}
	m.add(oc, h, tool, out)
	if tenant != "" {
		if c := m.tenant(tenant); c != nil {
			c.add(oc, h, tool, out)
		}
	}
	o.mu.Unlock()
}

// tenant returns tenant's counts of the minute, new ones (zero) if it had
// none; nil past MaxTenants tenants.
func (m *minute) tenant(tenant string) *counts {
	if c := m.tenants[tenant]; c != nil {
		return c
	}
	if len(m.tenants) >= MaxTenants {
		return nil
	}
	if m.tenants == nil {
		m.tenants = make(map[string]*counts, 4)
	}
	var c *counts
	if n := len(m.spare); n > 0 {
		c, m.spare = m.spare[n-1], m.spare[:n-1]
	} else {
		c = new(counts)
	}
	m.tenants[tenant] = c
	return c
}

// add counts one decision: its outcome oc, latency bucket h, tool name and
// policies.
func (m *counts) add(oc, h int, tool string, out *warden.Outcome) {
	m.outcomes[oc]++
	m.hist[h]++
	if oc == Deny {
		if tool != "" {
			m.deniedTools = count(m.deniedTools, tool)
		}
		if out.PolicyID != "" {
			m.deniedPolicies = count(m.deniedPolicies, out.PolicyID)
		}
	}
	for i := range out.Results {
		r := &out.Results[i]
		if r.PolicyID == "" {
			continue
		}
		c := m.policies[r.PolicyID]
		if c == nil {
			if m.policies == nil {
				m.policies = make(map[string]*[2]uint32, 8)
			}
			key := r.PolicyID
			if len(m.policies) >= MaxKeys {
				key = Other
			}
			if c = m.policies[key]; c == nil {
				c = new([2]uint32)
				m.policies[key] = c
			}
		}
		c[0]++
		if r.PolicyID == out.PolicyID && r.Mode != warden.Audit.String() {
			c[1]++
		}
	}
}

// count adds one to m[key] (Other once m holds MaxKeys keys).
func count(m map[string]uint32, key string) map[string]uint32 {
	if m == nil {
		m = make(map[string]uint32, 8)
	}
	if _, ok := m[key]; !ok && len(m) >= MaxKeys {
		key = Other
	}
	m[key]++
	return m
}

// reset empties the minute for unix minute at; the tenants' counts are
// kept, zeroed, for reuse.
func (m *minute) reset(at int64) {
	m.at = at
	m.counts.reset()
	for _, c := range m.tenants {
		c.reset()
		m.spare = append(m.spare, c)
	}
	clear(m.tenants)
}

func (m *counts) reset() {
	m.outcomes = [numOutcomes]uint32{}
	m.hist = [histBuckets]uint32{}
	clear(m.deniedTools)
	clear(m.deniedPolicies)
	clear(m.policies)
}
