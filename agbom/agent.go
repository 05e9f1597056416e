package agbom

// DefaultAgent is the agent whose AgBOM gets what a gateway observes for a
// caller without a name (a server without auth, `warden mcp stdio`): the
// MCP gateway's tools and the A2A gateway's agent cards.
const DefaultAgent = "default"
