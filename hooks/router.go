package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sort"
	"sync"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/policy"
)

// Router builds and caches one chain per event: the policy engine (first,
// unless a declaration of kind policy places it) and the sync hooks whose
// events match, in priority order (ties keep file order), guarded by the
// patch and escalation rules. It is safe for concurrent use.
type Router struct {
	hooks  []*hook
	engine *hook
	def    warden.Verdict
	chains sync.Map // event name → *warden.Chain
	async  sync.Map // event name → []*hook
}

// hook is a declaration with its handler built.
type hook struct {
	Decl
	step warden.Step
}

// New builds the handlers of decls (validate first: Parse). engine is the
// policy engine; def is the config's defaultDecision.
func New(decls []Decl, engine *policy.Engine, def warden.Verdict) (*Router, error) {
	r := &Router{def: def}
	r.engine = &hook{Decl: Decl{Name: "policy", Kind: KindPolicy, Events: []string{"*"}, Priority: math.MinInt, order: -1}}
	r.engine.step = warden.Step{Name: "policy", Kind: KindPolicy, Handler: engine}
	placed := false
	for i := range decls {
		d := decls[i]
		h := &hook{Decl: d}
		var handler warden.Handler
		if d.Kind == KindPolicy {
			handler, placed = engine, true
		} else {
			build, ok := builders[d.Kind]
			if !ok {
				return nil, fmt.Errorf("%s:%d: hook %q: unknown kind %q", d.File, d.Line, d.Name, d.Kind)
			}
			var err error
			if handler, err = build(d); err != nil {
				return nil, fmt.Errorf("%s:%d: hook %q: %w", d.File, d.Line, d.Name, err)
			}
		}
		h.step = warden.Step{Name: d.Name, Kind: d.Kind, Handler: handler, Failure: d.Failure, Timeout: d.Timeout}
		if d.When != nil {
			cond := d.When
			h.step.When = func(ctx context.Context, ev *warden.Event) (bool, error) { return cond.Eval(ctx, ev) }
		}
		r.hooks = append(r.hooks, h)
	}
	if placed {
		r.engine = nil
	}
	return r, nil
}

// ForEngine returns a router with the same hooks deciding through another
// policy engine with another default decision (a tenant's). The command,
// webhook and remote-guardian handlers are shared, so their bounds (for
// instance limits.hook_procs) hold across both routers.
func (r *Router) ForEngine(engine *policy.Engine, def warden.Verdict) *Router {
	out := &Router{def: def, hooks: make([]*hook, len(r.hooks))}
	for i, h := range r.hooks {
		if h.Kind == KindPolicy {
			c := *h
			c.step.Handler = engine
			h = &c
		}
		out.hooks[i] = h
	}
	if r.engine != nil {
		c := *r.engine
		c.step.Handler = engine
		out.engine = &c
	}
	return out
}

// matching returns the hooks for event (sync or async), in run order.
func (r *Router) matching(event string, async bool) []*hook {
	var hs []*hook
	if r.engine != nil && !async {
		hs = append(hs, r.engine)
	}
	for _, h := range r.hooks {
		if h.Async == async && h.Matches(event) {
			hs = append(hs, h)
		}
	}
	sort.SliceStable(hs, func(i, j int) bool { return hs[i].Priority < hs[j].Priority })
	return hs
}

// Chain returns the chain for event (a pipeline.Router).
func (r *Router) Chain(event string) *warden.Chain {
	if c, ok := r.chains.Load(event); ok {
		return c.(*warden.Chain)
	}
	var steps []warden.Step
	for _, h := range r.matching(event, false) {
		steps = append(steps, h.step)
	}
	c, _ := r.chains.LoadOrStore(event, warden.NewChain(r.def, steps...).WithGuard(guard))
	return c.(*warden.Chain)
}

// Async returns the async hooks for event.
func (r *Router) Async(event string) []*hook {
	if hs, ok := r.async.Load(event); ok {
		return hs.([]*hook)
	}
	hs, _ := r.async.LoadOrStore(event, r.matching(event, true))
	return hs.([]*hook)
}

// Info describes one configured hook, as /api/hooks/catalog lists them.
type Info struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Mode     string `json:"mode"`
	Priority int    `json:"priority"`
	Timeout  string `json:"timeout,omitempty"`
	Failure  string `json:"failure"`
	When     string `json:"when,omitempty"`
	Source   string `json:"source,omitempty"` // file:line of the declaration
}

// Hooks lists the hooks that run for event: the sync chain in run order,
// then the async hooks.
func (r *Router) Hooks(event string) []Info {
	var out []Info
	for _, async := range []bool{false, true} {
		for _, h := range r.matching(event, async) {
			i := Info{Name: h.Name, Kind: h.Kind, Mode: "sync", Priority: h.Priority, Failure: h.Failure.String()}
			if h == r.engine {
				i.Priority = 0
				i.Source = "built in: runs first"
			} else {
				i.Timeout = h.Timeout.String()
				i.Source = fmt.Sprintf("%s:%d", h.File, h.Line)
			}
			if async {
				i.Mode = "async"
			}
			if h.When != nil {
				i.When = h.When.String()
			}
			out = append(out, i)
		}
	}
	return out
}

// CatalogHandler serves GET /api/hooks/catalog?event=NAME: the hooks
// configured for the event in run order; without event, for every catalog
// event that has hooks besides the policy engine.
func (r *Router) CatalogHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		type entry struct {
			Event string `json:"event"`
			Hooks []Info `json:"hooks"`
		}
		var out []entry
		if name := req.URL.Query().Get("event"); name != "" {
			if len(catalog.Match(name)) == 0 {
				httpError(w, http.StatusBadRequest, fmt.Sprintf("event: unknown event %q", name))
				return
			}
			out = append(out, entry{name, r.Hooks(name)})
		} else {
			seen := map[string]bool{}
			for _, e := range catalog.All() {
				if seen[e.Name] {
					continue
				}
				seen[e.Name] = true
				if hs := r.Hooks(e.Name); len(hs) > 1 || (len(hs) == 1 && hs[0].Kind != KindPolicy) {
					out = append(out, entry{e.Name, hs})
				}
			}
		}
		if out == nil {
			out = []entry{}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
}
