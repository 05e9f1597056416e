// Package hooks runs declared hooks (docs/hooks.md): it parses hook
// declarations, builds one warden.Chain per event from them and the policy
// engine, applies hook patches under the catalog's patch types and the
// escalation guard, runs async hooks on a bounded pool, and dispatches hook
// events.
package hooks

import (
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/conf"
	"github.com/wardenhq/warden/internal/glob"

	"gopkg.in/yaml.v3"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/policy"
)

// Handler kinds.
const (
	KindPolicy  = "policy"
	KindCommand = "command"
	KindWebhook = "webhook"
	KindAOS     = "aos"
)

// DefaultTimeout bounds a hook that sets no timeout.
const DefaultTimeout = 5 * time.Second

// Decl is one validated hook declaration.
type Decl struct {
	Name     string
	Events   []string // names or globs, as written
	Async    bool
	When     *policy.Condition // nil: always
	Priority int
	Timeout  time.Duration
	Failure  warden.FailurePolicy
	Kind     string
	Command  []string
	URL      string
	Headers  map[string]string // ${VAR}-expanded; secrets: never log
	MaxProcs int               // command: processes at once (limits.hook_procs); 0: command.DefaultMaxProcs
	File     string
	Line     int
	order    int
}

// Matches reports whether d applies to the event named name.
func (d *Decl) Matches(name string) bool {
	for _, p := range d.Events {
		if glob.Match(p, name) {
			return true
		}
	}
	return false
}

// Parse validates the `hooks:` list of a config file (node is its value)
// and returns the declarations in file order, or every problem found as
// "file:line: message".
func Parse(file string, node *yaml.Node) ([]Decl, policy.ErrorList) {
	var list []declYAML
	errs := conf.Decode(file, "hooks", node, &list)
	if node.Kind != yaml.SequenceNode {
		return nil, errs
	}
	out := make([]Decl, 0, len(list))
	names := map[string]int{}
	for i, y := range list {
		item := node.Content[i]
		if y.Name == "" {
			continue // missing: reported by Decode
		}
		if prev, dup := names[y.Name]; dup {
			errs.Add(file, item.Line, item.Column, "hook %q is declared twice (first at line %d)", y.Name, prev)
			continue
		}
		names[y.Name] = item.Line
		out = append(out, y.decl(file, item.Line, i))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// declYAML is one entry of `hooks:` as written (docs/hooks.md).
type declYAML struct {
	Name     string         `yaml:"name" conf:"required"`
	Events   []string       `yaml:"events" conf:"one,required"`
	Mode     string         `yaml:"mode" oneof:"sync|async"`
	When     string         `yaml:"when"`
	Priority int            `yaml:"priority"`
	Timeout  time.Duration  `yaml:"timeout" range:"1ns.."`
	Failure  string         `yaml:"failure" oneof:"closed|open"`
	Command  []string       `yaml:"command"`
	Webhook  *conf.Upstream `yaml:"webhook"`
	AOS      *conf.Upstream `yaml:"aos"`
	Policy   *anyValue      `yaml:"policy"`

	when *policy.Condition // When, compiled by Validate
}

// anyValue is the value of a key whose presence is what counts (policy:).
type anyValue struct{}

func (*anyValue) UnmarshalConf(*yaml.Node) error { return nil }

// Validate checks what spans keys: one handler kind, a condition that
// compiles, events the catalog knows, sync only on events that have a
// sync point.
func (y *declYAML) Validate() error {
	var errs []error
	kinds := 0
	for _, set := range []bool{y.Command != nil, y.Webhook != nil, y.AOS != nil, y.Policy != nil} {
		if set {
			kinds++
		}
	}
	switch {
	case kinds == 0:
		errs = append(errs, conf.Errorf("", "hook %q: no handler: set one of command, webhook, aos, policy", y.Name))
	case kinds > 1:
		errs = append(errs, conf.Errorf("", "hook %q: more than one handler kind", y.Name))
	}
	if y.Command != nil && (len(y.Command) == 0 || y.Command[0] == "") {
		errs = append(errs, conf.Errorf("command", "expected a non-empty list: the program and its arguments"))
	}
	if y.When != "" {
		c, err := policy.CompileCondition(y.When)
		if err != nil {
			errs = append(errs, conf.Errorf("when", "%v", err))
		}
		y.when = c
	}
	for i, p := range y.Events {
		if err := policy.CheckEvent(p, catalog.Names()); err != nil {
			errs = append(errs, conf.Errorf(fmt.Sprintf("events[%d]", i), "%v", err))
			continue
		}
		if y.Mode == "async" {
			continue
		}
		for _, e := range catalog.Match(p) {
			if !e.Sync {
				at := "events"
				if y.Mode != "" {
					at = "mode"
				}
				errs = append(errs, conf.Errorf(at, "hook %q: mode sync on async-only event %s (matched by %q); use mode: async", y.Name, e.Name, p))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// decl is the validated declaration of entry i at line.
func (y *declYAML) decl(file string, line, i int) Decl {
	d := Decl{Name: y.Name, Events: y.Events, Async: y.Mode == "async", When: y.when, Priority: y.Priority,
		Timeout: y.Timeout, Command: y.Command, File: file, Line: line, order: i}
	if d.Timeout == 0 {
		d.Timeout = DefaultTimeout
	}
	if y.Failure == "open" {
		d.Failure = warden.FailOpen
	}
	switch {
	case y.Command != nil:
		d.Kind = KindCommand
	case y.Webhook != nil:
		d.Kind, d.URL, d.Headers = KindWebhook, y.Webhook.URL, headers(y.Webhook.Headers)
	case y.AOS != nil:
		d.Kind, d.URL, d.Headers = KindAOS, y.AOS.URL, headers(y.AOS.Headers)
	default:
		d.Kind = KindPolicy
	}
	return d
}

func headers(h map[string]string) map[string]string {
	if h == nil {
		return map[string]string{}
	}
	return h
}
