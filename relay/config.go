package relay

import (
	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/conf"
)

// The gateways' upstreams as the config declares them (docs/gateways.md):
// the mcp: and a2a: sections, decoded by conf. They live here, beside the
// upstream call, rather than in mcpgate and a2agate: the core imports the
// config, and the core imports no surface.

// Upstreams are a gateway's upstreams by name (conf.Upstream: a url and
// headers); each name holds letters, digits, '-', '_' and '.'
// (conf.CheckName).
type Upstreams map[string]conf.Upstream

// named returns u as the gateways take them: warden.Upstreams, each with
// its name and headers (never nil).
func (u Upstreams) named() map[string]warden.Upstream {
	out := make(map[string]warden.Upstream, len(u))
	for name, up := range u {
		h := up.Headers
		if h == nil {
			h = map[string]string{}
		}
		out[name] = warden.Upstream{Name: name, URL: up.URL, Headers: h}
	}
	return out
}

// MCPConfig is the mcp: section: the upstream MCP servers of /mcp/{server}.
type MCPConfig struct {
	Servers Upstreams `yaml:"servers"`
}

// Validate checks the servers' names.
func (c *MCPConfig) Validate() error { return conf.CheckNames("servers", c.Servers) }

// Upstreams are the servers as mcpgate.NewHTTP takes them.
func (c MCPConfig) Upstreams() map[string]warden.Upstream { return c.Servers.named() }

// A2AConfig is the a2a: section: the upstream agents of /a2a/{agent}.
type A2AConfig struct {
	Agents Upstreams `yaml:"agents"`
}

// Validate checks the agents' names.
func (c *A2AConfig) Validate() error { return conf.CheckNames("agents", c.Agents) }

// Upstreams are the agents as a2agate.New takes them.
func (c A2AConfig) Upstreams() map[string]warden.Upstream { return c.Agents.named() }
