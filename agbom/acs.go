package agbom

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
)

// FromACS turns the payload of an agbom/snapshot or agbom/changed step into
// a store update for agent (in tenant) at `at`:
//
//   - agbom/snapshot: the document under "agbom" (or the payload itself)
//     with its "components"; it replaces what the agent declared before
//     (components the gateways observed stay);
//   - agbom/changed: "added" and "changed" components are created or
//     replaced, "removed" ones (ids, or objects with an id) dropped; a
//     payload carrying a full document under "agbom" instead is a snapshot.
//
// Every component must parse (see Parse); an error names the first that
// does not, and nothing is applied.
func FromACS(method, tenant, agent string, payload map[string]any, at time.Time) (*Update, error) {
	if agent == "" {
		return nil, errors.New("the step names no agent (metadata.agent_id)")
	}
	u := &Update{Tenant: tenant, Agent: agent, Source: SourceACS, At: at}
	doc, full := payload["agbom"].(map[string]any)
	switch {
	case method == catalog.MethodAgBOMSnapshot:
		if !full {
			doc = payload
		}
		u.Replace = true
		if err := addComponents(u, doc["components"], "components"); err != nil {
			return nil, err
		}
	case method == catalog.MethodAgBOMChanged && full:
		u.Replace = true
		if err := addComponents(u, doc["components"], "agbom.components"); err != nil {
			return nil, err
		}
	case method == catalog.MethodAgBOMChanged:
		for _, k := range []string{"added", "changed"} {
			if err := addComponents(u, payload[k], k); err != nil {
				return nil, err
			}
		}
		rm, _ := payload["removed"].([]any)
		for i, r := range rm {
			switch x := r.(type) {
			case string:
				u.Remove = append(u.Remove, x)
			case map[string]any:
				id, _ := x["id"].(string)
				if id == "" {
					return nil, fmt.Errorf("removed[%d]: no id", i)
				}
				u.Remove = append(u.Remove, id)
			default:
				return nil, fmt.Errorf("removed[%d]: want a component id or a component", i)
			}
		}
	default:
		return nil, fmt.Errorf("%s is not an AgBOM method", method)
	}
	if len(u.Put)+len(u.Remove) > MaxComponents {
		return nil, fmt.Errorf("%d components in one update (at most %d)", len(u.Put)+len(u.Remove), MaxComponents)
	}
	return u, nil
}

func addComponents(u *Update, v any, field string) error {
	if v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		return fmt.Errorf("%s: want an array of components", field)
	}
	if len(list) > MaxComponents {
		return fmt.Errorf("%s: %d components (at most %d)", field, len(list), MaxComponents)
	}
	for i, x := range list {
		raw, err := json.Marshal(x)
		if err != nil {
			return fmt.Errorf("%s[%d]: %v", field, i, err)
		}
		c, err := Parse(raw)
		if err != nil {
			return fmt.Errorf("%s[%d]: %v", field, i, err)
		}
		sc, err := c.Stored()
		if err != nil {
			return fmt.Errorf("%s[%d]: %v", field, i, err)
		}
		u.Put = append(u.Put, sc)
	}
	return nil
}

// Observer keeps the AgBOM of every agent from its agbom/snapshot and
// agbom/changed steps: after a step is decided, allowed (or modified) and
// recorded, its update is written to the store, synchronously within
// Timeout so that the AgBOM read right after the answer includes it. A
// refused step changes nothing. A payload that does not parse, or an
// update past a bound, is logged and changes nothing (the step's record
// stays in the trace).
type Observer struct {
	Store   Store
	Timeout time.Duration                 // default 2s
	Logf    func(format string, a ...any) // default: discard
	Now     func() time.Time              // default time.Now
}

var _ pipeline.Observer = (*Observer)(nil)

// Observe implements pipeline.Observer.
func (o *Observer) Observe(ev *warden.Event, out *warden.Outcome, recordErr error) {
	if ev.Name != catalog.MethodAgBOMSnapshot && ev.Name != catalog.MethodAgBOMChanged {
		return
	}
	if recordErr != nil || (out.Verdict != warden.Allow && out.Verdict != warden.Modify) {
		return
	}
	payload := ev.Payload
	if out.Verdict == warden.Modify && out.Payload != nil {
		payload = out.Payload
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	u, err := FromACS(ev.Name, ev.Principal.Tenant, ev.Agent.ID, payload, now())
	if err == nil {
		timeout := o.Timeout
		if timeout <= 0 {
			timeout = 2 * time.Second
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		err = o.Store.UpdateAgBOM(ctx, u)
		cancel()
	}
	if err != nil && o.Logf != nil {
		o.Logf("agbom: %s of agent %q not applied: %v", ev.Name, ev.Agent.ID, err)
	}
}
