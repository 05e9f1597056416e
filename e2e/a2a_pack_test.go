package e2e

import (
	"testing"
	"time"
)

// TestA2APackRedactsStream: warden with the built-in pack alone
// in front of the @a2a-js/sdk agent of a2a_server.mjs. A streamed status
// update and artifact update carrying an AWS key reach the @a2a-js/sdk
// client redacted, in A2A 1.0 and 0.3, as the same key in an MCP result
// does; the task read back with tasks/get carries no key either.
func TestA2APackRedactsStream(t *testing.T) {
	nodeDir := nodeGroup(t, "a2a")
	bin := wardenBinary(t)
	agent := a2aAgent(t, nodeDir)
	cfg := writeConfig(t, nil, map[string]string{"echo": agent + "/"})
	srv := startServer(t, bin, "--config", cfg, "--data", t.TempDir())
	read := func() []traceRec { return traceFromHTTP(t, srv.url) }
	t.Run("1.0", func(t *testing.T) {
		runScript(t, nodeDir, 90*time.Second, "a2a_pack_client.mjs", "--url", srv.url+"/a2a/echo")
		eventuallyTrace(t, read, "a2a", "modify", "redact-secrets-inbound-a2a")
	})
	t.Run("0.3", func(t *testing.T) {
		runScript(t, nodeDir, 90*time.Second, "a2a_pack_client.mjs", "--v03", "--url", srv.url+"/a2a/echo")
	})
	if t.Failed() {
		t.Logf("warden serve output:\n%s", srv.out)
	}
}
