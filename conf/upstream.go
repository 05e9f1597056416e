package conf

// Upstream is an HTTP endpoint warden calls, as the config declares it: a
// gateway's upstream (mcp.servers.NAME, a2a.agents.NAME; relay), a hook's
// webhook or aos. Its URL is required and http(s); the headers are sent
// with every call; ${VAR}s are expanded in both.
type Upstream struct {
	URL     string            `yaml:"url" conf:"env,url,required"`
	Headers map[string]string `yaml:"headers" conf:"env"`
}
