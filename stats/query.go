package stats

import (
	"cmp"
	"slices"
	"time"
)

// Counts are decisions by outcome, indexed by Allow, Modify, Ask, Defer,
// Deny and Error.
type Counts [numOutcomes]uint64

// Total is the number of decisions counted.
func (c Counts) Total() uint64 {
	var n uint64
	for _, v := range c {
		n += v
	}
	return n
}

// Point is one minute of a Series.
type Point struct {
	// Time is the start of the minute.
	Time     time.Time
	Outcomes Counts
	// P50 and P99 are the decision latency quantiles of the minute (upper
	// bounds of histogram buckets, within 25%); zero without decisions.
	P50, P99 time.Duration
}

// of is the minute's counts of tenant: every decision's for "", nil when
// the tenant did not decide in it.
func (m *minute) of(tenant string) *counts {
	if tenant == "" {
		return &m.counts
	}
	return m.tenants[tenant]
}

// Series returns the last n minutes (at most Minutes), oldest first, the
// current minute last, of tenant's decisions (every decision's for "").
// Minutes without decisions are zero points.
func (o *Observer) Series(tenant string, n int) []Point {
	n = min(max(n, 0), Minutes)
	now := o.now().Unix() / 60
	out := make([]Point, n)
	var hist [histBuckets]uint32
	for i := range out {
		at := now - int64(n-1-i)
		p := &out[i]
		p.Time = time.Unix(at*60, 0).UTC()
		o.mu.Lock()
		m := &o.minutes[((at%Minutes)+Minutes)%Minutes]
		var c *counts
		if m.at == at {
			c = m.of(tenant)
		}
		ok := c != nil
		if ok {
			for k, v := range c.outcomes {
				p.Outcomes[k] = uint64(v)
			}
			hist = c.hist
		}
		o.mu.Unlock()
		if ok {
			var h [histBuckets]uint64
			for k, v := range hist {
				h[k] = uint64(v)
			}
			p.P50, p.P99 = quantile(&h, 0.50), quantile(&h, 0.99)
		}
	}
	return out
}

// Count is a key (a tool name, a policy id) and how often it was counted.
type Count struct {
	Key string
	N   uint64
}

// PolicyCount is how often a policy matched a step (audit mode included)
// and how often it was the policy whose decision was answered.
type PolicyCount struct {
	Matched, Decided uint64
}

// Summary aggregates the minutes of a window.
type Summary struct {
	// Since is the start of the oldest minute in the window.
	Since    time.Time
	Outcomes Counts
	P50, P99 time.Duration
	// DeniedTools and DeniedPolicies are the most denied, most first (ties
	// by key), at most the top asked for.
	DeniedTools, DeniedPolicies []Count
	// Policies counts every policy that matched in the window, by id.
	Policies map[string]PolicyCount
}

// Summary aggregates tenant's decisions (every decision's for "") of the
// last d (rounded up to whole minutes, at most a day, the current minute
// included), keeping the top most denied tools and policies. The lock is
// taken one minute at a time, so a summary never holds up decisions for
// long.
func (o *Observer) Summary(tenant string, d time.Duration, top int) Summary {
	n := int((d + time.Minute - 1) / time.Minute)
	n = min(max(n, 1), Minutes)
	now := o.now().Unix() / 60
	s := Summary{Since: time.Unix((now-int64(n-1))*60, 0).UTC(), Policies: map[string]PolicyCount{}}
	var hist [histBuckets]uint64
	tools, policies := map[string]uint64{}, map[string]uint64{}
	for at := now - int64(n-1); at <= now; at++ {
		o.mu.Lock()
		m := &o.minutes[((at%Minutes)+Minutes)%Minutes]
		if c := m.of(tenant); m.at == at && c != nil {
			for k, v := range c.outcomes {
				s.Outcomes[k] += uint64(v)
			}
			for k, v := range c.hist {
				hist[k] += uint64(v)
			}
			for k, v := range c.deniedTools {
				tools[k] += uint64(v)
			}
			for k, v := range c.deniedPolicies {
				policies[k] += uint64(v)
			}
			for k, c := range c.policies {
				pc := s.Policies[k]
				pc.Matched += uint64(c[0])
				pc.Decided += uint64(c[1])
				s.Policies[k] = pc
			}
		}
		o.mu.Unlock()
	}
	s.P50, s.P99 = quantile(&hist, 0.50), quantile(&hist, 0.99)
	s.DeniedTools, s.DeniedPolicies = topN(tools, top), topN(policies, top)
	return s
}

// quantile is the upper bound of the histogram bucket holding quantile q;
// zero for an empty histogram.
func quantile(h *[histBuckets]uint64, q float64) time.Duration {
	var total uint64
	for _, v := range h {
		total += v
	}
	if total == 0 {
		return 0
	}
	rank := uint64(q*float64(total) + 0.5)
	rank = min(max(rank, 1), total)
	var seen uint64
	for i, v := range h {
		seen += v
		if seen >= rank {
			return histUpper(i)
		}
	}
	return histUpper(histBuckets - 1)
}

// topN returns the n largest counts of m, largest first, ties by key.
func topN(m map[string]uint64, n int) []Count {
	out := make([]Count, 0, len(m))
	for k, v := range m {
		out = append(out, Count{k, v})
	}
	slices.SortFunc(out, func(a, b Count) int {
		if c := cmp.Compare(b.N, a.N); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
	if n >= 0 && len(out) > n {
		out = out[:n]
	}
	return out
}
