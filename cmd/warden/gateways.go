package main

import (
	"log/slog"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/internal/sealid"
)

// gatewayIDs is the sealer of the MCP session ids and A2A task ids the
// gateways hand their clients (gateways.session_key, gateways.session_max_age;
// docs/gateways.md "Several replicas"). Without a key it is a random one for
// this process, and a replica behind a balancer is warned: its clients'
// sessions and tasks would not continue on the others.
func gatewayIDs(cfg *config.Config, log *slog.Logger) (*sealid.Sealer, error) {
	g := cfg.Gateways
	if len(g.SessionKeys) == 0 && (len(cfg.MCP.Servers) > 0 || len(cfg.A2A.Agents) > 0) {
		log.Info("gateways.session_key is not set: MCP session ids and A2A task ids open on this replica only (set the same key on every replica to run several)")
	}
	return g.Sealer()
}
