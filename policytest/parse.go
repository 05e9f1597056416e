package policytest

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/wardenhq/warden/labels"

	"gopkg.in/yaml.v3"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/policy"
)

// parser collects the located errors of one test file.
type parser struct {
	file string
	errs policy.ErrorList
}

func (p *parser) errf(n *yaml.Node, format string, args ...any) {
	p.errs = append(p.errs, policy.Error{File: p.file, Line: n.Line, Column: n.Column, Msg: fmt.Sprintf(format, args...)})
}

// fields calls fn for each key of a mapping node, refusing a key given twice.
func (p *parser) fields(m *yaml.Node, fn func(key string, k, v *yaml.Node)) {
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if seen[k.Value] {
			p.errf(k, "%s: given twice", k.Value)
			continue
		}
		seen[k.Value] = true
		fn(k.Value, k, v)
	}
}

// strings decodes a string or a list of strings.
func (p *parser) strings(field string, v *yaml.Node) []string {
	if v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
		return []string{v.Value}
	}
	var out []string
	if v.Kind != yaml.SequenceNode || v.Decode(&out) != nil {
		p.errf(v, "%s: want a string or a list of strings", field)
	}
	return out
}

func (p *parser) policies(v *yaml.Node) []string {
	ps := p.strings("policies", v)
	for _, s := range ps {
		if s == "" {
			p.errf(v, "policies: an empty path")
		}
	}
	return ps
}

func (p *parser) cases(v *yaml.Node) []Case {
	if v.Kind != yaml.SequenceNode {
		p.errf(v, "tests: want a list of cases")
		return nil
	}
	var cs []Case
	names := map[string]int{}
	for _, n := range v.Content {
		c, ok := p.testCase(n)
		if !ok {
			continue
		}
		if line, dup := names[c.Name]; dup {
			p.errf(n, "test %q: the name is taken by the test at line %d", c.Name, line)
		}
		names[c.Name] = c.Line
		cs = append(cs, c)
	}
	return cs
}

// testCase parses one case; ok is false when it is too broken to list.
func (p *parser) testCase(n *yaml.Node) (c Case, ok bool) {
	c.Line = n.Line
	if n.Kind != yaml.MappingNode {
		p.errf(n, "a test is a mapping (name:, event: and payload: or aos:, expect:)")
		return c, false
	}
	var hasExpect bool
	var eventNode, aosNode *yaml.Node
	p.fields(n, func(key string, k, v *yaml.Node) {
		switch key {
		case "name":
			c.Name = v.Value
		case "event":
			eventNode, c.Event = v, v.Value
		case "payload":
			c.Payload = p.object("payload", v)
		case "aos":
			aosNode, c.AOS = v, p.object("aos", v)
		case "setup":
			if v.Kind != yaml.SequenceNode {
				p.errf(v, "setup: want a list of AOS requests")
				return
			}
			for _, s := range v.Content {
				c.Setup = append(c.Setup, p.object("setup", s))
			}
		case "expect":
			hasExpect = true
			c.Expect = p.expect(v)
		case "tool_changes":
			c.ToolChanges = p.toolChanges(v)
		default:
			p.errf(k, "unknown field %q (want name, event, payload, aos, setup, tool_changes, expect)", key)
		}
	})
	if c.Name == "" {
		p.errf(n, "a test needs a name:")
		c.Name = fmt.Sprintf("line %d", n.Line)
	}
	switch {
	case eventNode != nil && aosNode != nil:
		p.errf(aosNode, "test %q: give event: and payload:, or aos:, not both", c.Name)
	case aosNode != nil:
		if c.ToolChanges != nil {
			p.errf(n, "test %q: tool_changes: goes with event: protocols/MCP (a tools/list answer)", c.Name)
		}
		if c.Payload != nil {
			p.errf(n, "test %q: payload: goes with event:, an AOS request's params are in aos:", c.Name)
		}
		if d := c.Expect.Decision; d == "ask" || d == "defer" {
			p.errf(n, "test %q: an AOS agent is answered allow, deny or modify (a step held for approval is denied with reasonCode approval_required); want deny, or an event case to see %s", c.Name, d)
		}
	case eventNode != nil:
		if !catalog.Known(c.Event) {
			msg := fmt.Sprintf("test %q: unknown event %q", c.Name, c.Event)
			if err := policy.CheckEvent(c.Event, catalog.Names()); err != nil {
				msg = fmt.Sprintf("test %q: unknown event: %v", c.Name, err)
			}
			p.errf(eventNode, "%s", msg)
		}
		if c.Setup != nil {
			p.errf(n, "test %q: setup: goes with aos: (requests answered before it)", c.Name)
		}
		if c.ToolChanges != nil && c.Event != catalog.MethodMCP {
			p.errf(n, "test %q: tool_changes: goes with event: protocols/MCP (a tools/list answer)", c.Name)
		}
		if c.Payload == nil {
			c.Payload = []byte("{}")
		}
	default:
		p.errf(n, "test %q: give event: and payload:, or aos:", c.Name)
	}
	if !hasExpect {
		p.errf(n, "test %q: no expect:", c.Name)
	}
	return c, true
}

// decisions are the decisions a case can expect.
var decisions = map[string]bool{"allow": true, "deny": true, "modify": true, "ask": true, "defer": true}

func (p *parser) expect(v *yaml.Node) Expect {
	var e Expect
	if v.Kind != yaml.MappingNode {
		p.errf(v, "expect: want a mapping (decision:, policy:, reason:, output_contains:, output_not_contains:, labels:)")
		return e
	}
	p.fields(v, func(key string, k, v *yaml.Node) {
		switch key {
		case "decision":
			e.Decision = v.Value
			if !decisions[v.Value] {
				p.errf(v, "expect.decision: %q is not allow, deny, modify, ask or defer", v.Value)
			}
		case "policy":
			e.Policy = v.Value
		case "reason":
			e.Reason = v.Value
		case "output_contains":
			e.OutputContains = p.strings(key, v)
		case "output_not_contains":
			e.OutputNotContains = p.strings(key, v)
		case "labels":
			ls := p.strings(key, v)
			for _, l := range ls {
				if err := labels.Valid(l); err != nil {
					p.errf(v, "expect.labels: %v", err)
				}
			}
			if ls == nil {
				ls = []string{}
			}
			e.Labels = &ls
		default:
			p.errf(k, "expect: unknown field %q (want decision, policy, reason, output_contains, output_not_contains, labels)", key)
		}
	})
	if e.Decision == "" {
		p.errf(v, "expect: no decision:")
	}
	return e
}

// object encodes a YAML mapping as a JSON object.
// toolChanges reads a case's tool_changes: a list of the changes the MCP
// gateway would find (warden.ToolChange: change, server, name, old, new).
func (p *parser) toolChanges(v *yaml.Node) []warden.ToolChange {
	if v.Kind != yaml.SequenceNode {
		p.errf(v, "tool_changes: want a list of {change, server, name, old, new}")
		return nil
	}
	var x any
	if err := v.Decode(&x); err != nil {
		p.errf(v, "tool_changes: %v", err)
		return nil
	}
	b, err := json.Marshal(x)
	if err != nil {
		p.errf(v, "tool_changes: not expressible as JSON: %v", err)
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	out := []warden.ToolChange{}
	if err := d.Decode(&out); err != nil {
		p.errf(v, "tool_changes: %v", err)
		return nil
	}
	for i, c := range out {
		if c.Change != warden.ToolChanged && c.Change != warden.ToolAdded && c.Change != warden.ToolRemoved {
			p.errf(v.Content[i], "tool_changes[%d]: change %q (want changed, added or removed)", i, c.Change)
		}
	}
	return out
}

func (p *parser) object(field string, v *yaml.Node) []byte {
	if v.Kind != yaml.MappingNode {
		p.errf(v, "%s: want a mapping (a JSON object)", field)
		return nil
	}
	var x any
	if err := v.Decode(&x); err != nil {
		p.errf(v, "%s: %v", field, err)
		return nil
	}
	b, err := json.Marshal(x)
	if err != nil {
		p.errf(v, "%s: not expressible as JSON: %v", field, err)
		return nil
	}
	return b
}
