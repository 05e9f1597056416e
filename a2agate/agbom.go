package a2agate

import (
	"context"
	"time"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/agbom"
)

// agbomTimeout bounds recording an agent card in the AgBOM.
const agbomTimeout = 2 * time.Second

// observeCard records ag's card as an a2a_peer component in the AgBOM of
// the caller (the principal's name, agbom.DefaultAgent without one). A store
// failure is logged; the card is served either way.
func (g *Gate) observeCard(ctx context.Context, ag *agent, card map[string]any) {
	if g.opts.AgBOM == nil {
		return
	}
	u := agbom.A2AObservation(ag.name, ag.public, "", card)
	pr := warden.PrincipalFrom(ctx)
	u.Tenant, u.Agent, u.At = pr.Tenant, pr.Name, time.Now()
	if u.Agent == "" {
		u.Agent = agbom.DefaultAgent
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), agbomTimeout)
	defer cancel()
	if err := g.opts.AgBOM.UpdateAgBOM(sctx, u); err != nil {
		g.opts.Logf("a2a %s: recording the agent card in the AgBOM of %q: %v", ag.name, u.Agent, err)
	}
}
