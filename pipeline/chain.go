package pipeline

import (
	"context"

	"github.com/wardenhq/warden"
)

// Router picks the chain for an event (hooks declared per event); nil means
// the Pipeline's single chain.
type Router func(event string) *warden.Chain

// chainFor returns the chain that decides events named event.
func (p *Pipeline) chainFor(event string) *warden.Chain {
	if p.router != nil {
		if c := p.router(event); c != nil {
			return c
		}
	}
	return p.chain
}

// buildViews is the views stage: the caller of the request (ctx's
// principal, when it has one) and the event's views.
func (p *Pipeline) buildViews(ctx context.Context, d *decision) {
	if pr := warden.PrincipalFrom(ctx); pr != (warden.Principal{}) {
		d.ev.Principal = pr
	}
	d.ev.BuildViews(p.views)
}

// runChain is the chain stage: the event's chain decides, unless a stage
// before refused the step.
func (p *Pipeline) runChain(ctx context.Context, d *decision) {
	if !d.refused {
		d.out = d.chain.Run(ctx, d.ev)
	}
}
