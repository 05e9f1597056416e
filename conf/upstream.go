package conf

// Upstream is a server a gateway forwards to, as the gateway's section
// declares it under its name (mcp.servers.NAME, a2a.agents.NAME): its URL,
// http(s), and the headers sent with every request, ${VAR}s expanded in
// both. The gateways' sections check the names with CheckNames.
type Upstream struct {
	URL     string            `yaml:"url" conf:"env,url"`
	Headers map[string]string `yaml:"headers" conf:"env"`
}

// Validate requires the url.
func (u *Upstream) Validate() error {
	if u.URL == "" {
		return Errorf("", "expected {url: ..., headers: {...}} with a url")
	}
	return nil
}
