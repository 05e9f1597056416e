// Package config loads warden's configuration file (docs/hooks.md): the default
// decision, the policy paths and the hook declarations. It validates before anything is built and
// reports problems as "file:line: message".
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/acsstate"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/backend"
	"github.com/wardenhq/warden/conf"
	"github.com/wardenhq/warden/fleet/registry"
	"github.com/wardenhq/warden/hooks"
	"github.com/wardenhq/warden/internal/sealid"
	"github.com/wardenhq/warden/otelx"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/relay"
	"github.com/wardenhq/warden/stream"
)

// Config is a parsed, validated configuration file.
type Config struct {
	// File is the path the config was read from ("" for the defaults).
	File string
	// DefaultDecision applies when no policy or hook decides: Allow or Deny.
	DefaultDecision warden.Verdict
	// Policies are policy files or directories, resolved relative to File.
	Policies []string
	// Shadow are the policy files or directories of the shadow set
	// (shadow:), resolved relative to File: a candidate set — the built-in
	// pack and these, in place of Policies — decided beside the live one
	// on every recorded step and never applied (guardian.Options.Shadow).
	Shadow []string
	// Hooks are the validated hook declarations, in file order.
	Hooks []hooks.Decl
	// MCP are the upstream MCP servers of /mcp/{server} (mcp:).
	MCP relay.MCPConfig
	// A2A are the upstream agents of /a2a/{agent} (a2a:).
	A2A relay.A2AConfig
	// Limits are the resource bounds (limits:), defaults filled in.
	Limits Limits
	// TLS is the server certificate and the client CA (tls:), paths
	// resolved relative to File.
	TLS auth.TLS
	// Auth are the credentials every surface but /healthz asks for (auth:);
	// its zero value leaves the surfaces open.
	Auth auth.Config
	// Origins are the browser origins allowed besides the same origin
	// (origins:), canonical scheme://host:port.
	Origins auth.Origins
	// Trace is what the trace keeps and for how long (trace:).
	Trace audit.TraceConfig
	// Tenants are the tenants with their own policies (tenants:), by name.
	Tenants map[string]Tenant
	// Approvals are the hold time, retry window and notifications of steps
	// that ask a human (approvals:), defaults filled in.
	Approvals Approvals
	// ACS is the Agent Control Standard endpoint's keys and windows (acs:),
	// its key files read relative to File.
	ACS acsstate.Config
	// OTel is where decision spans are exported (otel:); without an
	// endpoint it exports none.
	OTel otelx.Config
	// Stream is where the decision stream is published (stream:); without
	// a stream.nats url it publishes none.
	Stream stream.Config
	// Instance is how this replica names itself in the registry
	// (instance:), defaults filled in.
	Instance registry.Config
	// Gateways is the key that seals the gateways' MCP session ids and A2A
	// task ids (gateways:), defaults filled in.
	Gateways sealid.Config
	// Store is the PostgreSQL database of the trace and the shared state
	// (store:, docs/scaling.md), a postgres:// URL with ${VAR}s expanded; ""
	// keeps the SQLite trace under --data.
	Store string
}

// Default returns the configuration used without --config.
func Default() *Config {
	return &Config{DefaultDecision: warden.Allow, Limits: DefaultLimits(), Approvals: DefaultApprovals(), ACS: acsstate.DefaultConfig(), OTel: otelx.DefaultConfig(), Gateways: sealid.DefaultConfig(), Stream: stream.DefaultConfig(), Instance: registry.DefaultConfig()}
}

// Error and ErrorList are the policy loader's located errors: a config and
// its policies report problems the same way ("file:line: message").
type (
	Error     = policy.Error
	ErrorList = policy.ErrorList
)

// section is one top-level key of the file and how it is decoded into
// Config: most sections are a feature's typed struct decoded by conf
// (strictly, with its bounds and Validate); decode reads the section's node.
type section struct {
	key    string
	decode func(file, key string, v *yaml.Node, c *Config) ErrorList
}

// typed decodes a section into the field field returns, a feature's
// config struct holding its defaults (conf.Decode).
func typed(field func(c *Config) any) func(file, key string, v *yaml.Node, c *Config) ErrorList {
	return func(file, key string, v *yaml.Node, c *Config) ErrorList {
		return conf.Decode(file, key, v, field(c))
	}
}

// sections are the top-level keys, in the order messages list them.
var sections = []section{
	{"defaultDecision", func(file, key string, v *yaml.Node, c *Config) ErrorList {
		var d Decision
		errs := conf.Decode(file, key, v, &d)
		if len(errs) == 0 {
			c.DefaultDecision = d.Verdict()
		}
		return errs
	}},
	{"policies", decodePaths(func(c *Config) *[]string { return &c.Policies })},
	{"shadow", decodePaths(func(c *Config) *[]string { return &c.Shadow })},
	{"hooks", func(file, _ string, v *yaml.Node, c *Config) (errs ErrorList) {
		c.Hooks, errs = hooks.Parse(file, v)
		return errs
	}},
	{"mcp", typed(func(c *Config) any { return &c.MCP })},
	{"a2a", typed(func(c *Config) any { return &c.A2A })},
	{"limits", typed(func(c *Config) any { return &c.Limits })},
	{"auth", typed(func(c *Config) any { return &c.Auth })},
	{"origins", typed(func(c *Config) any { return &c.Origins })},
	{"tenants", decodeTenants},
	{"trace", typed(func(c *Config) any { return &c.Trace })},
	{"tls", func(file, key string, v *yaml.Node, c *Config) ErrorList {
		errs := conf.Decode(file, key, v, &c.TLS)
		c.TLS.Cert, c.TLS.Key, c.TLS.ClientCA = inDir(file, c.TLS.Cert), inDir(file, c.TLS.Key), inDir(file, c.TLS.ClientCA)
		return errs
	}},
	{"approvals", typed(func(c *Config) any { return &c.Approvals })},
	{"acs", func(file, key string, v *yaml.Node, c *Config) ErrorList {
		c.ACS.Dir = filepath.Dir(file) // its key files are relative to the config file
		return conf.Decode(file, key, v, &c.ACS)
	}},
	{"otel", typed(func(c *Config) any { return &c.OTel })},
	{"gateways", typed(func(c *Config) any { return &c.Gateways })},
	{"store", func(file, key string, v *yaml.Node, c *Config) ErrorList {
		// A scalar: the URL, ${VAR}s expanded (a password from the
		// environment), that backend.CheckStoreURL accepts.
		s, err := "", errors.New("expected a postgres:// URL")
		if v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
			if s, err = conf.ExpandEnv(v.Value); err == nil {
				err = backend.CheckStoreURL(s)
			}
		}
		if err != nil {
			return ErrorList{{File: file, Line: v.Line, Msg: fmt.Sprintf("%s: %v", key, err)}}
		}
		c.Store = s
		return nil
	}},
	{"stream", typed(func(c *Config) any { return &c.Stream })},
	{"instance", typed(func(c *Config) any { return &c.Instance })},
}

var sectionByKey = func() map[string]section {
	m := make(map[string]section, len(sections))
	for _, s := range sections {
		m[s.key] = s
	}
	return m
}()

func sectionKeys() string {
	ks := make([]string, len(sections))
	for i, s := range sections {
		ks[i] = s.key
	}
	return strings.Join(ks, ", ")
}

// Load reads and validates the configuration file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, data)
}

// Parse validates a configuration read from file (used in messages and to
// resolve relative policy paths).
func Parse(file string, data []byte) (*Config, error) {
	c := Default()
	c.File = file
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, conf.YAMLErrors(file, err)
	}
	if len(doc.Content) == 0 {
		return c, nil // an empty file is the defaults
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, ErrorList{{File: file, Line: root.Line, Msg: "expected a mapping at the top level"}}
	}
	var errs ErrorList
	add := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, Error{File: file, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		sec, ok := sectionByKey[k.Value]
		switch {
		case !ok:
			add(k, "unknown key %q (want %s)", k.Value, sectionKeys())
		case seen[k.Value]:
			add(k, "key %q appears twice", k.Value)
		default:
			seen[k.Value] = true
			errs = append(errs, sec.decode(file, k.Value, v, c)...)
		}
	}
	if err := c.Validate(); err != nil {
		for _, e := range joined(err) {
			add(root, "%v", e)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	for i := range c.Hooks {
		c.Hooks[i].MaxProcs = c.Limits.HookProcs
	}
	return c, nil
}
