// Package handlertest holds warden.Handlers for tests of the chain and the
// pipeline. It is for tests only.
package handlertest

import (
	"context"
	"maps"

	"github.com/wardenhq/warden"
)

// Fixed returns a handler that always decides d. A Modify decision answers
// a copy of the payload it sees with d.PolicyID appended to the copy's
// "seen" member, so the order in which modifications apply is observable.
func Fixed(d warden.Decision) warden.Handler {
	return warden.HandlerFunc(func(_ context.Context, ev *warden.Event) (warden.Decision, error) {
		if d.Verdict == warden.Modify {
			p := maps.Clone(ev.Payload)
			if p == nil {
				p = map[string]any{}
			}
			seen, _ := p["seen"].(string)
			p["seen"] = seen + d.PolicyID
			d.Payload = p
		}
		return d, nil
	})
}
