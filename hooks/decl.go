// Package hooks runs declared hooks (docs/hooks.md): it parses hook
// declarations, builds one warden.Chain per event from them and the policy
// engine, applies hook patches under the catalog's patch types and the
// escalation guard, runs async hooks on a bounded pool, and dispatches hook
// events.
package hooks

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

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

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// Parse validates the `hooks:` list of a config file (node is its value)
// and returns the declarations in file order, or every problem found as
// "file:line: message".
func Parse(file string, node *yaml.Node) ([]Decl, policy.ErrorList) {
	var errs policy.ErrorList
	add := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, policy.Error{File: file, Line: n.Line, Column: n.Column, Msg: fmt.Sprintf(format, args...)})
	}
	if node.Kind != yaml.SequenceNode {
		add(node, "hooks: expected a list of hook declarations")
		return nil, errs
	}
	var out []Decl
	names := map[string]int{}
	for i, item := range node.Content {
		if item.Kind != yaml.MappingNode {
			add(item, "hooks[%d]: expected a mapping", i)
			continue
		}
		d, ok := parseOne(file, item, i, add)
		if !ok {
			continue
		}
		if prev, dup := names[d.Name]; dup {
			add(item, "hook %q is declared twice (first at line %d)", d.Name, prev)
			continue
		}
		names[d.Name] = d.Line
		out = append(out, d)
	}
	return out, errs
}

func parseOne(file string, item *yaml.Node, i int, add func(*yaml.Node, string, ...any)) (Decl, bool) {
	d := Decl{File: file, Line: item.Line, order: i, Timeout: DefaultTimeout}
	ok := true
	bad := func(n *yaml.Node, format string, args ...any) {
		add(n, format, args...)
		ok = false
	}
	var modeNode, eventsNode *yaml.Node
	kinds := 0
	for j := 0; j+1 < len(item.Content); j += 2 {
		k, v := item.Content[j], item.Content[j+1]
		switch k.Value {
		case "name":
			d.Name = v.Value
		case "events":
			eventsNode = v
			if err := v.Decode(&d.Events); err != nil || len(d.Events) == 0 {
				if v.Kind == yaml.ScalarNode && v.Value != "" {
					d.Events = []string{v.Value}
				} else {
					bad(v, "events: expected a non-empty list of event names or globs")
				}
			}
		case "mode":
			modeNode = v
			switch v.Value {
			case "sync":
			case "async":
				d.Async = true
			default:
				bad(v, "mode: expected sync or async, got %q", v.Value)
			}
		case "when":
			c, err := policy.CompileCondition(v.Value)
			if err != nil {
				bad(v, "when: %v", err)
				continue
			}
			d.When = c
		case "priority":
			if err := v.Decode(&d.Priority); err != nil {
				bad(v, "priority: expected an integer, got %q", v.Value)
			}
		case "timeout":
			t, err := time.ParseDuration(v.Value)
			if err != nil || t <= 0 {
				bad(v, "timeout: expected a positive duration like 2s or 500ms, got %q", v.Value)
				continue
			}
			d.Timeout = t
		case "failure":
			switch v.Value {
			case "closed":
				d.Failure = warden.FailClosed
			case "open":
				d.Failure = warden.FailOpen
			default:
				bad(v, "failure: expected closed or open, got %q", v.Value)
			}
		case KindCommand:
			kinds++
			d.Kind = KindCommand
			if err := v.Decode(&d.Command); err != nil || len(d.Command) == 0 || d.Command[0] == "" {
				bad(v, "command: expected a non-empty list: the program and its arguments")
			}
		case KindWebhook, KindAOS:
			kinds++
			d.Kind = k.Value
			var h struct {
				URL     string            `yaml:"url"`
				Headers map[string]string `yaml:"headers"`
			}
			if err := v.Decode(&h); err != nil || h.URL == "" {
				bad(v, "%s: expected {url: ..., headers: {...}} with a url", k.Value)
				continue
			}
			url, err := ExpandEnv(h.URL)
			if err != nil {
				bad(v, "%s.url: %v", k.Value, err)
			}
			d.URL = url
			d.Headers = map[string]string{}
			for hk, hv := range h.Headers {
				x, err := ExpandEnv(hv)
				if err != nil {
					bad(v, "%s.headers.%s: %v", k.Value, hk, err)
				}
				d.Headers[hk] = x
			}
		case KindPolicy:
			kinds++
			d.Kind = KindPolicy
		default:
			bad(k, "unknown key %q in hook declaration (want name, events, mode, when, priority, timeout, failure and one of command, webhook, aos, policy)", k.Value)
		}
	}
	if d.Name == "" {
		bad(item, "hooks[%d]: missing name", i)
	}
	switch {
	case kinds == 0:
		bad(item, "hook %q: no handler: set one of command, webhook, aos, policy", d.Name)
	case kinds > 1:
		bad(item, "hook %q: more than one handler kind", d.Name)
	}
	if eventsNode == nil {
		bad(item, "hook %q: missing events", d.Name)
	}
	for i, p := range d.Events {
		if err := policy.CheckEvent(p, catalog.Names()); err != nil {
			n := eventsNode
			if n.Kind == yaml.SequenceNode && i < len(n.Content) {
				n = n.Content[i] // the entry's own line
			}
			bad(n, "events: %v", err)
			continue
		}
		evs := catalog.Match(p)
		if d.Async {
			continue
		}
		for _, e := range evs {
			if !e.Sync {
				n := eventsNode
				if modeNode != nil {
					n = modeNode
				}
				bad(n, "hook %q: mode sync on async-only event %s (matched by %q); use mode: async", d.Name, e.Name, p)
				break
			}
		}
	}
	return d, ok
}

// ExpandEnv replaces ${VAR} with the environment's value; an unset variable
// is an error (a header without its secret would fail later, less clearly).
func ExpandEnv(s string) (string, error) {
	var missing []string
	out := envRef.ReplaceAllStringFunc(s, func(m string) string {
		name := envRef.FindStringSubmatch(m)[1]
		v, ok := os.LookupEnv(name)
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("environment variable %s is not set", strings.Join(missing, ", "))
	}
	return out, nil
}
