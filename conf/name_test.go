package conf

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestCheckName(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"acme", true}, {"a-b_c.d9", true}, {"A", true},
		{"", false}, {"a/b", false}, {"a b", false}, {"é", false},
	} {
		if err := CheckName(c.name); (err == nil) != c.ok {
			t.Errorf("CheckName(%q) = %v, want ok %v", c.name, err, c.ok)
		}
	}
}

// gateway is a section with named upstreams and a list its Validate checks
// item by item.
type gateway struct {
	Servers map[string]Upstream `yaml:"servers"`
	Paths   []string            `yaml:"paths"`
}

func (g *gateway) Validate() error {
	errs := []error{CheckNames("servers", g.Servers)}
	for i, p := range g.Paths {
		if p == "" {
			errs = append(errs, Errorf(fmt.Sprintf("paths[%d]", i), "empty path"))
		}
	}
	return errors.Join(errs...)
}

func decodeGateway(t *testing.T, src string) (gateway, string) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	var g gateway
	return g, Decode("w.yaml", "mcp", doc.Content[0], &g).Error()
}

func TestUpstreams(t *testing.T) {
	t.Setenv("CONF_TEST_TOKEN", "t0k")
	g, errs := decodeGateway(t, "servers:\n  everything: {url: \"http://127.0.0.1:3001/mcp\", headers: {Authorization: \"Bearer ${CONF_TEST_TOKEN}\"}}\n  bare:\n    url: https://h\n")
	if errs != "" {
		t.Fatal(errs)
	}
	if e := g.Servers["everything"]; e.URL != "http://127.0.0.1:3001/mcp" || e.Headers["Authorization"] != "Bearer t0k" || g.Servers["bare"].URL != "https://h" {
		t.Fatalf("got %+v", g.Servers)
	}
	for _, c := range []struct{ name, src, want string }{
		{"no url", "servers:\n  x: {headers: {}}\n", "w.yaml:2: mcp.servers.x: expected {url: ..., headers: {...}} with a url"},
		{"bad url", "servers:\n  x: {url: \"ftp://h\"}\n", `w.yaml:2: mcp.servers.x.url: expected an http(s) URL, got "ftp://h"`},
		{"unset header variable", "servers:\n  x: {url: \"http://h\", headers: {A: \"${CONF_TEST_UNSET}\"}}\n", "w.yaml:2: mcp.servers.x.headers.A: environment variable CONF_TEST_UNSET is not set"},
		{"bad name", "servers:\n  a/b: {url: \"http://h\"}\n  c d: {url: \"http://h\"}\n", "w.yaml:2: mcp.servers.a/b: a name may hold letters, digits, '-', '_' and '.'\nw.yaml:3: mcp.servers.c d: a name may hold"},
		{"unknown key", "servers:\n  x: {url: \"http://h\", header: {}}\n", `w.yaml:2: mcp.servers.x: unknown key "header" (want url, headers)`},
		// Validate's error about a list item is placed at the item.
		{"list item", "paths:\n  - a\n  - \"\"\n", "w.yaml:3: mcp.paths[1]: empty path"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, errs := decodeGateway(t, c.src); !strings.Contains(errs, c.want) {
				t.Fatalf("errors:\n%s\nwant:\n%s", errs, c.want)
			}
		})
	}
}
