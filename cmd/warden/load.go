package main

import (
	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/hooks"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/sqlite"
)

// setup is what serve, check and eval share: the config and the compiled
// policies (the built-in pack when no path is given).
type setup struct {
	cfg   *config.Config
	paths []string // policy paths; empty means the built-in pack
	set   *policy.Set
}

// loadSetup reads --config and compiles the policies named by --policy, else
// by the config, else the built-in pack.
func loadSetup(configPath string, policyFlags []string) (*setup, error) {
	cfg := config.Default()
	if configPath != "" {
		c, err := config.Load(configPath)
		if err != nil {
			return nil, err
		}
		cfg = c
	}
	s := &setup{cfg: cfg, paths: policyFlags}
	if len(s.paths) == 0 {
		s.paths = cfg.Policies
	}
	var err error
	if len(s.paths) == 0 {
		s.set, err = policy.Builtin()
	} else {
		s.set, err = policy.Load(s.paths...)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
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
