package main

import (
	"flag"
	"fmt"
	"log/slog"

	"github.com/wardenhq/warden"
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

// open opens the Guardian the flags describe, recording in store (nil: no
// trace).
func (g *guardianFlags) open(store warden.Store, obs warden.Observer, log *slog.Logger) (*guardian.Guardian, error) {
	return guardian.Open(guardian.Options{
		ConfigFile: *g.config, Policies: g.policies, NoBuiltin: !*g.builtin,
		Store: store, Observer: obs, Logger: log,
	})
}

// source describes where the policies come from, for messages.
func source(gd *guardian.Guardian, builtin bool) string {
	paths := gd.PolicyPaths()
	switch {
	case len(paths) == 0 && builtin:
		return "the built-in pack"
	case len(paths) == 0:
		return "no policy files (--builtin=false)"
	case builtin:
		return fmt.Sprintf("the built-in pack and %v", paths)
	}
	return fmt.Sprint(paths)
}
