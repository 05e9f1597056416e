package pipeline

import (
	"context"

	"github.com/wardenhq/warden"
)

// Async runs the async hooks of an event that was decided and not refused
// (a step that is being taken); it must not block.
type Async interface {
	RunAsync(ev *warden.Event)
}

// runAsync is the async stage: a step that is taken (allowed, or modified:
// then as modified) starts its event's async hooks.
func (p *Pipeline) runAsync(_ context.Context, d *decision) {
	if d.out.Verdict != warden.Allow && d.out.Verdict != warden.Modify {
		return
	}
	final := d.ev
	if d.out.Verdict == warden.Modify && d.out.Payload != nil {
		final = d.ev.WithPayload(d.out.Payload)
	}
	p.async.RunAsync(final)
}
