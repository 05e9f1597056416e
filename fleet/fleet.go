// Package fleet is what a replica tells about itself: GET /readyz (whether
// it can decide now, and how far the decision stream is behind) and the
// replica registry behind GET /api/instances (docs/scaling.md).
package fleet

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/fleet/registry"

	"github.com/wardenhq/warden/stream"
)

// Defaults and bounds (config instance:, docs/scaling.md).
const (
	// ForgetAfter is how long an instance may stay unseen before the
	// registry forgets it.
	ForgetAfter = time.Hour
	// DefaultReadyTimeout bounds the store's readiness check.
	DefaultReadyTimeout = 2 * time.Second
	// callTimeout bounds one heartbeat or registry read.
	callTimeout = 5 * time.Second
)

// Readiness serves GET /readyz: 200 when this replica can decide (the store
// answers and the policies are loaded), else 503, with the reason, as JSON.
// The body also carries the decision stream's lag when there is a stream.
// /readyz is open (a balancer asks it without a credential), so it gives a
// reason code and a fixed message, never the underlying error: that is
// logged through Logf.
type Readiness struct {
	// Store is checked with audit.Readier when it implements it; a store
	// that does not is taken as ready while it is set.
	Store audit.Store
	// Policies reports whether the live policy set is loaded; nil: it is.
	Policies func() bool
	// Stream, when set, gives the decision stream's lag.
	Stream func() stream.Lag
	// Timeout bounds the store's check (0: DefaultReadyTimeout).
	Timeout time.Duration
	// Logf, when set, gets the store's error when readiness fails.
	Logf func(format string, args ...any)

	mu      sync.Mutex
	lastErr string
}

// Reason codes of a 503 from /readyz.
const (
	ReasonNoStore          = "no_store"
	ReasonStoreUnavailable = "store_unavailable"
	ReasonNoPolicies       = "policies_not_loaded"
)

// ReadyStatus is /readyz's body.
type ReadyStatus struct {
	Ready   bool        `json:"ready"`
	Reason  string      `json:"reason,omitempty"`
	Message string      `json:"message,omitempty"`
	Stream  *stream.Lag `json:"stream,omitempty"`
}

// Check returns the replica's readiness now.
func (rd *Readiness) Check(ctx context.Context) ReadyStatus {
	st := ReadyStatus{Ready: true}
	if rd.Stream != nil {
		l := rd.Stream()
		l.Error = "" // may name a host; the lag and flags are enough here
		st.Stream = &l
	}
	timeout := rd.Timeout
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	switch {
	case rd.Store == nil:
		st.Ready, st.Reason, st.Message = false, ReasonNoStore, "no trace store"
	case rd.Policies != nil && !rd.Policies():
		st.Ready, st.Reason, st.Message = false, ReasonNoPolicies, "the policies are not loaded"
	default:
		if r, ok := rd.Store.(audit.Readier); ok {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			err := r.Ready(cctx)
			cancel()
			if err != nil {
				st.Ready, st.Reason, st.Message = false, ReasonStoreUnavailable, "the trace store does not answer"
				rd.logChange(err.Error())
				return st
			}
		}
	}
	rd.logChange("")
	return st
}

// logChange logs the store's error when it changes (once per outage, not
// once per probe).
func (rd *Readiness) logChange(msg string) {
	rd.mu.Lock()
	changed := msg != rd.lastErr
	rd.lastErr = msg
	rd.mu.Unlock()
	if changed && rd.Logf != nil {
		if msg == "" {
			rd.Logf("readyz: the trace store answers again")
		} else {
			rd.Logf("readyz: not ready: %s", msg)
		}
	}
}

// ServeHTTP answers GET /readyz.
func (rd *Readiness) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	st := rd.Check(r.Context())
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !st.Ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(&st)
}

// RegistryOptions configure a Registry.
type RegistryOptions struct {
	// Heartbeat is how often the replica registers (0: registry.DefaultHeartbeat).
	Heartbeat time.Duration
	// Stale is after how many missed heartbeats an instance is shown
	// stale (0: registry.DefaultStale).
	Stale int
	// Revision gives the live policy revision at each heartbeat.
	Revision func() string
	// Logf reports failed heartbeats (once per change).
	Logf func(format string, args ...any)
	// Now is the clock (tests); nil: time.Now.
	Now func() time.Time
}

// Registry registers this replica in the store and lists the fleet.
type Registry struct {
	store registry.Store
	self  registry.Instance
	o     RegistryOptions

	mu      sync.Mutex
	lastErr string
}

// NewRegistry returns the registry of self (ID, Addr, Version; Started
// defaults to now) in store.
func NewRegistry(store registry.Store, self registry.Instance, o RegistryOptions) *Registry {
	if o.Heartbeat <= 0 {
		o.Heartbeat = registry.DefaultHeartbeat
	}
	if o.Stale <= 0 {
		o.Stale = registry.DefaultStale
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if self.Started.IsZero() {
		self.Started = o.Now()
	}
	return &Registry{store: store, self: self, o: o}
}

// Self is this replica's ID.
func (g *Registry) Self() string { return g.self.ID }

// Beat registers the replica once, now.
func (g *Registry) Beat(ctx context.Context) error {
	in := g.self
	in.LastSeen = g.o.Now()
	if g.o.Revision != nil {
		in.PolicyRevision = g.o.Revision()
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	err := g.store.Heartbeat(ctx, in)
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	g.mu.Lock()
	changed := msg != g.lastErr
	g.lastErr = msg
	g.mu.Unlock()
	if changed {
		if err != nil {
			g.o.Logf("instance registry: heartbeat failed: %v", err)
		} else {
			g.o.Logf("instance registry: heartbeat stored")
		}
	}
	return err
}

// Run heartbeats until ctx is done, forgetting instances unseen for
// ForgetAfter as it goes.
func (g *Registry) Run(ctx context.Context) {
	t := time.NewTicker(g.o.Heartbeat)
	defer t.Stop()
	beats := 0
	for {
		_ = g.Beat(ctx)
		if beats%100 == 0 {
			fctx, cancel := context.WithTimeout(ctx, callTimeout)
			_, _ = g.store.ForgetInstances(fctx, g.o.Now().Add(-ForgetAfter))
			cancel()
		}
		beats++
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// View is an instance as GET /api/instances gives it.
type View struct {
	registry.Instance
	// Stale: not seen for Stale heartbeats.
	Stale bool `json:"stale"`
	// Self: this replica.
	Self bool `json:"self"`
	// PolicyDiffers: its policy revision is not the one most live
	// (non-stale) replicas run.
	PolicyDiffers bool `json:"policy_differs"`
}

// Fleet is GET /api/instances's body.
type Fleet struct {
	Instances []View `json:"instances"`
	// PolicyRevision is the revision most live replicas run.
	PolicyRevision string `json:"policy_revision"`
	// Heartbeat and StaleAfter are this replica's settings, in seconds.
	Heartbeat  float64 `json:"heartbeat_seconds"`
	StaleAfter float64 `json:"stale_after_seconds"`
}

// List reads the fleet from the store.
func (g *Registry) List(ctx context.Context) (Fleet, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	ins, err := g.store.Instances(ctx)
	if err != nil {
		return Fleet{}, err
	}
	staleAfter := time.Duration(g.o.Stale) * g.o.Heartbeat
	return Summarize(ins, g.self.ID, g.o.Now(), staleAfter, g.o.Heartbeat), nil
}

// Summarize marks ins stale (last seen more than staleAfter before now),
// self, and whether each runs a policy revision other than the one most
// live instances run (ties go to the lexically smallest revision).
func Summarize(ins []registry.Instance, self string, now time.Time, staleAfter, heartbeat time.Duration) Fleet {
	f := Fleet{Instances: make([]View, 0, len(ins)), Heartbeat: heartbeat.Seconds(), StaleAfter: staleAfter.Seconds()}
	count := map[string]int{}
	for _, in := range ins {
		v := View{Instance: in, Stale: now.Sub(in.LastSeen) > staleAfter, Self: in.ID == self}
		if !v.Stale {
			count[in.PolicyRevision]++
		}
		f.Instances = append(f.Instances, v)
	}
	revs := make([]string, 0, len(count))
	for r := range count {
		revs = append(revs, r)
	}
	sort.Strings(revs)
	for _, r := range revs {
		if count[r] > count[f.PolicyRevision] {
			f.PolicyRevision = r
		}
	}
	if len(revs) > 1 {
		for i := range f.Instances {
			v := &f.Instances[i]
			v.PolicyDiffers = !v.Stale && v.PolicyRevision != f.PolicyRevision
		}
	}
	return f
}

// ServeHTTP answers GET /api/instances.
func (g *Registry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if len(r.URL.Query()) > 0 {
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "/api/instances takes no parameters"})
		return
	}
	f, err := g.List(r.Context())
	if err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "reading the instance registry: " + err.Error()})
		return
	}
	_ = json.NewEncoder(w).Encode(&f)
}
