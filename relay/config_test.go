package relay

import (
	"strings"
	"testing"

	"github.com/wardenhq/warden/conf"
)

func decodeSection(t *testing.T, key, src string, dst any) string {
	t.Helper()
	return conf.DecodeYAML("w.yaml", key, []byte(src), dst).Error()
}

func TestUpstreamsConfig(t *testing.T) {
	t.Setenv("RELAY_TEST_TOKEN", "t0k")
	var m MCPConfig
	if errs := decodeSection(t, "mcp", "servers:\n  everything: {url: \"http://127.0.0.1:3001/mcp\", headers: {Authorization: \"Bearer ${RELAY_TEST_TOKEN}\"}}\n  bare:\n    url: https://h\n", &m); errs != "" {
		t.Fatal(errs)
	}
	ups := m.Upstreams()
	if e := ups["everything"]; len(ups) != 2 || e.Name != "everything" || e.URL != "http://127.0.0.1:3001/mcp" || e.Headers["Authorization"] != "Bearer t0k" {
		t.Fatalf("got %+v", ups)
	}
	if b := ups["bare"]; b.Name != "bare" || b.URL != "https://h" || b.Headers == nil {
		t.Fatalf("bare %+v", b)
	}
	var a A2AConfig
	if errs := decodeSection(t, "a2a", "agents:\n  echo: {url: \"http://127.0.0.1:41241/\"}\n", &a); errs != "" || a.Upstreams()["echo"].URL != "http://127.0.0.1:41241/" {
		t.Fatalf("a2a %+v %s", a, errs)
	}

	for _, c := range []struct{ name, src, want string }{
		{"no url", "servers:\n  x: {headers: {}}\n", "w.yaml:2: mcp.servers.x: missing url"},
		{"bad url", "servers:\n  x: {url: \"ftp://h\"}\n", `w.yaml:2: mcp.servers.x.url: expected an http(s) URL, got "ftp://h"`},
		{"unset header variable", "servers:\n  x:\n    url: \"http://h\"\n    headers: {A: \"${RELAY_TEST_UNSET}\"}\n", "w.yaml:4: mcp.servers.x.headers.A: environment variable RELAY_TEST_UNSET is not set"},
		{"bad name", "servers:\n  a/b: {url: \"http://h\"}\n", "w.yaml:2: mcp.servers.a/b: a name may hold letters, digits, '-', '_' and '.'"},
		{"unknown key", "servers:\n  x: {url: \"http://h\", header: {}}\n", `w.yaml:2: mcp.servers.x: unknown key "header" (want url, headers)`},
		{"wrong section key", "agents: {}\n", `w.yaml:1: mcp: unknown key "agents" (want servers)`},
		{"servers not a mapping", "servers: [x]\n", "w.yaml:1: mcp.servers: expected a mapping"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var m MCPConfig
			if errs := decodeSection(t, "mcp", c.src, &m); !strings.Contains(errs, c.want) {
				t.Fatalf("errors:\n%s\nwant:\n%s", errs, c.want)
			}
		})
	}
	// A url that does not decode is one error, not also a missing url.
	var bad MCPConfig
	if errs := decodeSection(t, "mcp", "servers:\n  x: {url: \"ftp://h\"}\n", &bad); errs != `w.yaml:2: mcp.servers.x.url: expected an http(s) URL, got "ftp://h"` {
		t.Fatalf("errors:\n%s", errs)
	}
}
