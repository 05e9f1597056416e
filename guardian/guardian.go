// Package guardian is warden in-process: it opens a Guardian from the same
// configuration as `warden serve` — policies, hooks, a trace store — and
// decides steps with Decide and Dispatch. Every command and HTTP surface of
// warden goes through it, so the same step gets the same answer wherever it
// arrives; a Go agent can use it directly to guard its own tool calls (see
// the examples).
package guardian

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/labels"
	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/backend"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/hooks"
	"github.com/wardenhq/warden/ocsf"
	"github.com/wardenhq/warden/otelx"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/unseal"
)

// Options say where a Guardian's configuration and trace come from. The
// zero value is a Guardian with the built-in policy pack, no hooks and no
// trace.
type Options struct {
	// ConfigFile is a config file (YAML, README.md); "" means the defaults.
	// Config, when set, is used instead.
	ConfigFile string
	Config     *config.Config
	// Policies are policy files or directories added to the built-in pack
	// (and to the config's policies).
	Policies []string
	// NoBuiltin leaves the built-in pack out (--builtin=false).
	NoBuiltin bool
	// Shadow are the policy files or directories of a shadow set
	// (--shadow-policy), added to the config's shadow:. A shadow set is a
	// complete candidate set: the built-in pack (unless NoBuiltin) and
	// these paths — in place of Policies and the config's policies: — plus,
	// for a tenant's callers, the tenant's policies. It decides every
	// recorded step beside the live set, its results are recorded with
	// mode "shadow", and it is never applied (see shadow.go).
	Shadow []string
	// Backend is the trace that records every decision and the state kept
	// beside it (approvals, sessions' labels, AgBOMs), each feature used
	// when the backend keeps it; the caller closes it. Store is the same
	// for a store alone: its backend.Of. Both nil with Data "" means no
	// trace.
	Backend *backend.Backend
	Store   audit.Store
	// Data opens the backend when Backend and Store are nil — the
	// config's store: (PostgreSQL) when it has one, else the SQLite trace
	// in this directory — and the Guardian then owns it and closes it.
	// The backend's package must be linked (package backend): import
	// github.com/wardenhq/warden/sqlite, or .../postgres.
	//
	// A trace a backend keeps on disk or in a database (backend.Backend's
	// Redact: SQLite's, PostgreSQL's) follows the config's trace section:
	// unless trace.raw_input is set, every record is redacted (package
	// redact) with the key in the backend's directory's trace.key,
	// created on first use; with trace.retention or trace.max_size, a
	// backend that prunes (SQLite) prunes itself in the background until
	// it is closed.
	Data string
	// KeyDir is the directory of the redaction key (trace.key) of a
	// backend with no directory of its own (PostgreSQL: the config's
	// store:, or a *postgres.Store); default Data. Replicas sharing one
	// database should share this key file so that a secret gets the same
	// tag whichever replica recorded it. Without KeyDir or Data such a
	// trace must set trace.raw_input or RecordFilter.
	KeyDir string
	// RecordFilter, when set, changes every record before it is stored,
	// instead of that redaction (a trace the backend does not mark Redact,
	// such as one in memory, is not redacted unless this is set, e.g. to
	// redact.New(key).Filter).
	RecordFilter audit.RecordFilter
	// Observer is told of every decision (metrics); nil means none.
	Observer pipeline.Observer
	// AsyncWorkers and AsyncQueue size the async hook pool (0: the hooks
	// package's defaults). OnAsyncRun and OnAsyncDrop, if set, are told of
	// every async run and drop (metrics); they must not block.
	AsyncWorkers, AsyncQueue int
	OnAsyncRun               func(hook string, err error)
	OnAsyncDrop              func(hook string)
	// Logger logs reloads and failures; nil discards.
	Logger *slog.Logger
	// Notifier, when set, is told of every new approval (approvals.notify).
	Notifier approval.Notifier
}

// Guardian is one decision core with its policies, hooks and trace. It is
// safe for concurrent use.
type Guardian struct {
	cfg         *config.Config
	paths       []string // policy paths besides the pack
	shadowPaths []string // the shadow set's paths besides the pack
	builtin     bool
	*set        // the shared set: callers without a tenant of their own
	tenants     map[string]*set
	pool        *hooks.Pool
	backend     *backend.Backend // never nil: no features without a trace
	store       audit.Store      // backend.Trace
	ownsStore   bool
	approvals   *approval.Manager // nil without a store that keeps approvals
	unseal      *unseal.Service   // nil without sealed originals
	// sealFailures counts records stored without their originals.
	sealFailures atomic.Int64
	// sealStop ends expireSealed, which closes sealDone (nil without
	// trace.seal retention).
	sealStop, sealDone chan struct{}
	labels             *labels.Cache // every set's sessions' labels (labels.go)
	log                *slog.Logger
	otel               *otelx.Exporter // nil without otel: (telemetry.go)
	ocsf               *ocsf.Sink      // nil without trace.ocsf_file
}

// set is one policy set with the router and pipeline that decide by it:
// the shared one, or a tenant's (the shared policies plus the tenant's).
type set struct {
	engine *policy.Engine
	router *hooks.Router
	dec    *pipeline.Pipeline
	def    warden.Verdict // when nothing decides
	shadow *shadowSet     // nil without a shadow set
}

var (
	_ warden.Core     = (*Guardian)(nil)
	_ approval.Holder = (*Guardian)(nil)
)

// LoadConfig returns the configuration opts name: Config when set, else
// ConfigFile loaded and validated, else the defaults. Errors name
// file:line.
func (opts Options) LoadConfig() (*config.Config, error) {
	if opts.Config != nil {
		return opts.Config, nil
	}
	if opts.ConfigFile == "" {
		return config.Default(), nil
	}
	return config.Load(opts.ConfigFile)
}

// Open loads and compiles the configuration and policies, opens the trace
// when asked, and returns the Guardian. Errors name file:line.
func Open(opts Options) (*Guardian, error) {
	cfg, err := opts.LoadConfig()
	if err != nil {
		return nil, err
	}
	g := &Guardian{cfg: cfg, builtin: !opts.NoBuiltin, log: opts.Logger, set: &set{def: cfg.DefaultDecision}}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	g.paths = append(append([]string(nil), cfg.Policies...), opts.Policies...)
	ps, err := policy.LoadSet(policy.Spec{Builtin: g.builtin, Paths: g.paths, Events: catalog.Names()})
	if err != nil {
		return nil, err
	}
	g.engine = policy.NewEngine(ps, policy.Options{})
	if g.router, err = hooks.New(cfg.Hooks, g.engine, cfg.DefaultDecision); err != nil {
		return nil, err
	}
	g.shadowPaths = append(append([]string(nil), cfg.Shadow...), opts.Shadow...)
	if g.set.shadow, err = g.newShadow(nil, cfg.DefaultDecision); err != nil {
		return nil, err
	}
	if len(cfg.Tenants) > 0 {
		g.tenants = make(map[string]*set, len(cfg.Tenants))
	}
	for _, name := range cfg.TenantNames() {
		t := cfg.Tenants[name]
		paths := append(append([]string(nil), g.paths...), t.Policies...)
		tps, err := policy.LoadSet(policy.Spec{Builtin: g.builtin, Paths: paths, Events: catalog.Names()})
		if err != nil {
			return nil, fmt.Errorf("tenant %s: %w", name, err)
		}
		def := t.DefaultDecision.Verdict()
		if def == warden.Abstain {
			def = cfg.DefaultDecision
		}
		ts := &set{engine: policy.NewEngine(tps, policy.Options{}), def: def}
		if ts.shadow, err = g.newShadow(t.Policies, def); err != nil {
			return nil, fmt.Errorf("tenant %s: %w", name, err)
		}
		ts.router = g.router.ForEngine(ts.engine, def)
		g.tenants[name] = ts
	}
	if g.backend, g.ownsStore, err = openBackend(opts, cfg); err != nil {
		return nil, err
	}
	g.store = g.backend.Trace
	filter, redactString, err := g.traceSetup(opts)
	if err != nil {
		if g.ownsStore {
			g.store.Close()
		}
		return nil, err
	}
	g.pool = hooks.NewPool(opts.AsyncWorkers, opts.AsyncQueue, g.store)
	g.pool.OnRun, g.pool.OnDrop = opts.OnAsyncRun, opts.OnAsyncDrop
	g.pool.Filter = filter
	if as := g.backend.Approvals; as != nil {
		g.approvals = approval.New(approval.Options{Store: as, Trace: g.store, Filter: filter, Redact: redactString,
			Wait: cfg.Approvals.Wait, TTL: cfg.Approvals.TTL, URL: cfg.Approvals.URL, Notifier: opts.Notifier, Log: g.log})
	}
	obs, err := g.telemetry(cfg, opts.Observer)
	if err != nil {
		if g.approvals != nil {
			g.approvals.Close()
		}
		g.pool.Close(context.Background())
		if g.ownsStore {
			g.store.Close()
		}
		return nil, err
	}
	g.labels = newLabels(g.backend)
	shared := pipeline.Options{Store: g.store, RecordFilter: filter, Labels: g.labels, Observer: g.withAgBOM(obs)}
	if g.approvals != nil {
		shared.Approvals = g.approvals
	}
	g.set.buildPipeline(shared, g.pool)
	for _, ts := range g.tenants {
		ts.buildPipeline(shared, g.pool)
	}
	return g, nil
}

// Decide decides one step: it builds the event's views, runs the chain
// configured for the event, records the outcome (when there is a trace)
// before returning it, and starts the event's async hooks. An event without
// a surface is SurfaceSDK, and its payload is validated first as the AOS
// endpoint validates its params (an AOS event's payload that does not fit
// its method is an error, nothing is decided). Otherwise the error wraps
// audit.ErrUnavailable when the outcome could not be recorded; the
// outcome is then a deny.
func (g *Guardian) Decide(ctx context.Context, ev *warden.Event) (warden.Outcome, error) {
	if ev.Payload == nil {
		ev.Payload = map[string]any{}
	}
	if ev.Surface == "" || ev.Surface == warden.SurfaceSDK {
		ev.Surface = warden.SurfaceSDK
		if err := catalog.CheckPayload(ev.Name, ev.Payload); err != nil {
			return warden.Outcome{}, err
		}
	}
	s, err := g.setFor(ctx, ev)
	if err != nil {
		return warden.Outcome{}, err
	}
	return s.dec.Decide(ctx, ev)
}

// Await holds a step that asked (out.ApprovalID names its pending
// approval) until the approval is decided, expires (approvals.wait) or ctx
// ends, and returns what to answer: the step allowed (or modified) when
// approved, denied otherwise. Without approvals (no trace that keeps them)
// it returns out.WithoutHold(). Surfaces that can hold a call use it through
// approval.Settle; a Go agent calls it after Decide returns Ask.
func (g *Guardian) Await(ctx context.Context, out warden.Outcome) warden.Outcome {
	if g.approvals == nil {
		return out.WithoutHold()
	}
	return g.approvals.Await(ctx, out)
}

// Approvals returns the approval keeper (nil without a trace that keeps
// approvals): the API decides and lists through it.
func (g *Guardian) Approvals() *approval.Manager { return g.approvals }

// Dispatch runs the chain for one hook event with a JSON object payload and
// answers as `warden hooks dispatch` does (docs/hooks.md): the decision, the
// merged patch and the payload after it. An unknown event or a payload that
// is not a JSON object is an error.
func (g *Guardian) Dispatch(ctx context.Context, event string, payload []byte) (hooks.Result, error) {
	return hooks.NewDispatcher(g).Dispatch(ctx, event, payload)
}

// Dispatcher returns the HTTP handler of POST /api/hooks/dispatch.
func (g *Guardian) Dispatcher() *hooks.Dispatcher { return hooks.NewDispatcher(g) }

// Hooks returns the hook router (the /api/hooks/catalog handler lists it).
func (g *Guardian) Hooks() *hooks.Router { return g.router }

// Config returns the configuration the Guardian was opened with.
func (g *Guardian) Config() *config.Config { return g.cfg }

// Store returns the trace store (nil without a trace).
func (g *Guardian) Store() audit.Store { return g.store }

// Close lets queued async hooks run until ctx is done (those still queued
// then are recorded as dropped), and closes the trace if the Guardian
// opened it.
func (g *Guardian) Close(ctx context.Context) error {
	if g.sealStop != nil {
		close(g.sealStop)
		<-g.sealDone
	}
	if g.approvals != nil {
		g.approvals.Close()
	}
	g.pool.Close(ctx)
	if err := g.closeTelemetry(ctx); err != nil {
		g.log.Warn("flushing the trace exporters", "err", err)
	}
	if g.ownsStore {
		if err := g.store.Close(); err != nil {
			return fmt.Errorf("flushing the trace: %w", err)
		}
	}
	return nil
}

// ErrUnknownEvent is returned for an event name the catalog does not have.
var ErrUnknownEvent = hooks.ErrUnknownEvent
