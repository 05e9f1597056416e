// Package replay re-decides recorded decisions under another policy set
// (`warden replay`, docs/testing-policies.md): each record of the trace is turned back
// into the event its policies saw — the recorded views and input — and
// decided again by a chain of the recorded steps, in their recorded order:
// the policy step runs again with the candidate policies, while command,
// webhook and remote-guardian hooks answer what the record says they
// answered, never run. The chain is warden.Chain with the hook chains'
// guard (hooks.Guard), so the steps compose exactly as they do live.
//
// A Replayer compiles nothing per record: the candidate set is compiled
// once (policy.LoadSet, as guardian.Open compiles it), and Run reads the
// trace with the store's streaming Scan.
package replay

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/hooks"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/unseal"
)

// Replayer re-decides records under a candidate policy set. It is safe for
// concurrent use.
type Replayer struct {
	shared  *candidate
	tenants map[string]*candidate // by tenant name; nil without tenants
	hooks   []hooks.Decl          // the config's sync hooks, to name those a record lacks
	// originals opens the records' sealed originals (WithOriginals); nil:
	// records are decided as stored.
	originals *unseal.Service
}

// candidate is one policy set to decide by, with its default decision.
type candidate struct {
	engine *policy.Engine
	def    warden.Verdict
	reads  map[string]groups // policy id → the detector groups it reads
}

func newCandidate(set *policy.Set, def warden.Verdict) *candidate {
	if def == warden.Abstain {
		def = warden.Allow
	}
	c := &candidate{engine: policy.NewEngine(set, policy.Options{}), def: def, reads: map[string]groups{}}
	for _, p := range c.engine.Set().Policies() {
		c.reads[p.ID] = detectorsOf(p)
	}
	return c
}

// New returns a Replayer deciding by set, with def when nothing decides
// (Abstain: allow).
func New(set *policy.Set, def warden.Verdict) *Replayer {
	return &Replayer{shared: newCandidate(set, def)}
}

// FromGuardian returns a Replayer deciding as g does: its shared policy
// set and default decision, and each tenant's set and default for that
// tenant's records. Only g's compiled policies are used; its hooks and
// trace are not (open g without a store; hooks are taken from the records).
// decls are the config's hook declarations: a record that lacks the result
// of one that matches its event, because the live chain stopped before it,
// is noted when the replay no longer stops there.
func FromGuardian(g *guardian.Guardian, decls []hooks.Decl) *Replayer {
	cfg := g.Config()
	r := New(g.Policies(), cfg.DefaultDecision)
	for _, name := range cfg.TenantNames() {
		def := cfg.Tenants[name].DefaultDecision.Verdict()
		if def == warden.Abstain {
			def = cfg.DefaultDecision
		}
		if r.tenants == nil {
			r.tenants = map[string]*candidate{}
		}
		r.tenants[name] = newCandidate(g.TenantPolicies(name), def)
	}
	for _, d := range decls {
		if !d.Async {
			r.hooks = append(r.hooks, d)
		}
	}
	// The run order of hooks.Router: by priority, ties in file order.
	slices.SortStableFunc(r.hooks, func(a, b hooks.Decl) int { return cmp.Compare(a.Priority, b.Priority) })
	return r
}

// Open compiles the candidate set opts describes, as guardian.Open
// compiles a Guardian's: the config's policies (opts.Config, or the file
// opts.ConfigFile; the defaults without either) and opts.Policies, with the
// built-in pack unless opts.NoBuiltin, each tenant's set, the default
// decisions. The config's hooks are left unbuilt — a replay never runs a
// hook, so it needs neither their programs nor their servers — and only
// named (see FromGuardian). opts must not name a trace (Store, Data).
func Open(opts guardian.Options) (*Replayer, error) {
	if opts.Store != nil || opts.Data != "" {
		return nil, errors.New("replay: the candidate set is opened without a trace")
	}
	cfg, err := opts.LoadConfig()
	if err != nil {
		return nil, err
	}
	noHooks := *cfg
	noHooks.Hooks = nil
	opts.Config, opts.ConfigFile = &noHooks, ""
	g, err := guardian.Open(opts)
	if err != nil {
		return nil, err
	}
	r := FromGuardian(g, cfg.Hooks)
	return r, g.Close(context.Background()) // the compiled sets outlive it
}

// Policies returns the candidate policy set records without a tenant (or
// of a tenant without its own set) are decided by.
func (r *Replayer) Policies() *policy.Set { return r.shared.engine.Set() }

func (r *Replayer) candidate(tenant string) *candidate {
	if c, ok := r.tenants[tenant]; ok {
		return c
	}
	return r.shared
}

// Replay re-decides rec: the outcome the candidate set gives the recorded
// step. A record whose live outcome went through an approval is given the
// same: an approved retry (reason code approval_granted) stays approved
// while the replay still holds the step (ask or defer), and a held step
// whose approval could not be opened (approval_unavailable) stays a deny.
// The error is a record that cannot be read (its input or views are not
// JSON objects).
func (r *Replayer) Replay(ctx context.Context, rec *audit.Record) (warden.Outcome, error) {
	c := r.candidate(rec.Tenant)
	ev, err := Event(rec)
	if err != nil {
		return warden.Outcome{}, err
	}
	out := warden.NewChain(c.def, steps(rec, c.engine)...).WithGuard(hooks.Guard).Run(ctx, ev)
	if out.Verdict.Holds() && len(rec.ReasonCodes) > 0 {
		switch rec.ReasonCodes[0] {
		case warden.CodeApprovalGranted:
			out = approval.Approved(out, &approval.Approval{ID: rec.ApprovalID})
		case warden.CodeApprovalUnavailable:
			out.Verdict, out.Payload = warden.Deny, nil
		}
	}
	return out, nil
}

// missingHooks returns the names of the config's sync hooks on rec's event
// that come after the step that decided it last in the live chain's order
// and have no result in rec: when rec is a deny, the live chain stopped
// before them (they may also have been skipped by their `when`).
func (r *Replayer) missingHooks(rec *audit.Record) []string {
	last := -1 // the policy engine runs first unless a declaration places it
	for i := len(rec.Results) - 1; i >= 0; i-- {
		res := &rec.Results[i]
		if res.Mode == modeShadow {
			continue
		}
		for j := range r.hooks {
			d := &r.hooks[j]
			if d.Matches(rec.Event) && (d.Name == res.Guardian || (isPolicy(res) && d.Kind == hooks.KindPolicy)) {
				last = j
				break
			}
		}
		break
	}
	var out []string
	for j := last + 1; j < len(r.hooks); j++ {
		if d := &r.hooks[j]; d.Kind != hooks.KindPolicy && d.Matches(rec.Event) {
			out = append(out, d.Name)
		}
	}
	return out
}
