package main

import (
	"flag"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/hooks"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/sqlite"
)

// setup is what serve, check and eval share: the config and the compiled
// policies.
type setup struct {
	cfg   *config.Config
	spec  policy.Spec // the built-in pack (unless --builtin=false) + paths
	paths []string    // policy paths besides the pack: the config's, then --policy
	set   *policy.Set
}

// policyFlags are --policy PATH (repeatable) and --builtin, on every command
// that decides (serve, check, eval, hooks dispatch, mcp stdio).
type policyFlags struct {
	paths   multiFlag
	builtin bool
}

func addPolicyFlags(fs *flag.FlagSet) *policyFlags {
	pf := &policyFlags{}
	fs.Var(&pf.paths, "policy", "policy file or directory added to the built-in pack (repeatable)")
	fs.BoolVar(&pf.builtin, "builtin", true, "include the built-in policy pack (--builtin=false leaves it out)")
	return pf
}

// loadSetup reads --config and compiles the built-in pack (unless
// --builtin=false) plus the policies named by the config's `policies:` and
// by --policy, checking every events entry against the hook catalog.
func loadSetup(configPath string, pf *policyFlags) (*setup, error) {
	cfg := config.Default()
	if configPath != "" {
		c, err := config.Load(configPath)
		if err != nil {
			return nil, err
		}
		cfg = c
	}
	s := &setup{cfg: cfg}
	s.paths = append(append([]string(nil), cfg.Policies...), pf.paths...)
	s.spec = policy.Spec{Builtin: pf.builtin, Paths: s.paths, Events: catalogNames()}
	var err error
	if s.set, err = policy.LoadSet(s.spec); err != nil {
		return nil, err
	}
	return s, nil
}

// catalogNames returns the hook catalog's event names (policy.Spec.Events).
func catalogNames() []string {
	all := catalog.All()
	names := make([]string, len(all))
	for i, e := range all {
		names[i] = e.Name
	}
	return names
}

// decider builds the policy engine and, from the config's hooks, one chain
// per event; store may be nil (no trace).
func (s *setup) decider(store warden.Store, obs warden.Observer) (*warden.Decider, *policy.Engine, *hooks.Router, error) {
	engine := policy.NewEngine(s.set, policy.Options{})
	router, err := hooks.New(s.cfg.Hooks, engine, s.cfg.DefaultDecision)
	if err != nil {
		return nil, nil, nil, err
	}
	def := warden.NewChain(s.cfg.DefaultDecision, warden.Step{Name: "policy", Kind: hooks.KindPolicy, Handler: engine})
	dec := warden.NewDecider(def, store, obs)
	dec.SetRouter(router.Chain)
	return dec, engine, router, nil
}

// tracer returns s as a warden.Store, or nil (no trace) for a nil *Store —
// a typed nil would not compare equal to nil inside the Decider.
func tracer(s *sqlite.Store) warden.Store {
	if s == nil {
		return nil
	}
	return s
}
