package main

import (
	"flag"
	"log/slog"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden/guardian"
)

// guardianFlags are the flags every deciding command shares: the config,
// the policies and whether the built-in pack is in.
type guardianFlags struct {
	config   *string
	builtin  *bool
	policies multiFlag
}

func addGuardianFlags(fs *flag.FlagSet) *guardianFlags {
	g := &guardianFlags{
		config:  fs.String("config", "", "config file (YAML)"),
		builtin: fs.Bool("builtin", true, "include the built-in policy pack (--builtin=false leaves it out)"),
	}
	fs.Var(&g.policies, "policy", "policy file or directory, added to the built-in pack (repeatable)")
	return g
}

// options are the Guardian options the flags describe.
func (g *guardianFlags) options() guardian.Options {
	return guardian.Options{ConfigFile: *g.config, Policies: g.policies, NoBuiltin: !*g.builtin}
}

// open opens the Guardian the flags describe, recording in store (nil: no
// trace).
func (g *guardianFlags) open(store audit.Store, obs pipeline.Observer, log *slog.Logger) (*guardian.Guardian, error) {
	o := g.options()
	o.Store, o.Observer, o.Logger = store, obs, log
	return guardian.Open(o)
}
