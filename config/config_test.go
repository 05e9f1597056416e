package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantErr string // substring of the error, "" for success
		check   func(t *testing.T, c *Config)
	}{
		{name: "empty file is the defaults", yaml: "", check: func(t *testing.T, c *Config) {
			if c.DefaultDecision != warden.Allow || len(c.Policies) != 0 {
				t.Fatalf("got %+v", c)
			}
		}},
		{name: "deny default and relative policies", yaml: "defaultDecision: deny\npolicies: [./p, /abs/q.yaml]\n",
			check: func(t *testing.T, c *Config) {
				if c.DefaultDecision != warden.Deny {
					t.Fatalf("default %v", c.DefaultDecision)
				}
				want := []string{filepath.Join("/etc/warden", "p"), "/abs/q.yaml"}
				if strings.Join(c.Policies, ",") != strings.Join(want, ",") {
					t.Fatalf("policies %v, want %v", c.Policies, want)
				}
			}},
		{name: "single policy path", yaml: "policies: pol.yaml\n", check: func(t *testing.T, c *Config) {
			if len(c.Policies) != 1 || c.Policies[0] != "/etc/warden/pol.yaml" {
				t.Fatalf("policies %v", c.Policies)
			}
		}},
		{name: "bad default", yaml: "policies: []\ndefaultDecision: modify\n", wantErr: "warden.yaml:2: defaultDecision: expected allow or deny"},
		{name: "unknown key", yaml: "defaultDecision: allow\npolicy: x\n", wantErr: `warden.yaml:2: unknown key "policy"`},
		{name: "upstreams", yaml: "mcp:\n  servers:\n    everything: {url: \"http://127.0.0.1:3001/mcp\", headers: {Authorization: \"Bearer ${UP_TOKEN}\"}}\na2a:\n  agents:\n    echo: {url: \"http://127.0.0.1:41241/\"}\n",
			check: func(t *testing.T, c *Config) {
				mcp, a2a := c.MCP.Upstreams(), c.A2A.Upstreams()
				if e := mcp["everything"]; e.Name != "everything" || e.URL != "http://127.0.0.1:3001/mcp" || e.Headers["Authorization"] != "Bearer t0k" ||
					a2a["echo"].Name != "echo" || a2a["echo"].URL != "http://127.0.0.1:41241/" || a2a["echo"].Headers == nil || len(mcp) != 1 || len(a2a) != 1 {
					t.Fatalf("got %+v %+v", mcp, a2a)
				}
			}},
		{name: "upstream without url", yaml: "mcp:\n  servers:\n    x: {headers: {}}\n", wantErr: "warden.yaml:3: mcp.servers.x: missing url"},
		{name: "upstream bad url", yaml: "a2a:\n  agents:\n    x: {url: \"ftp://h\"}\n", wantErr: "warden.yaml:3: a2a.agents.x.url: expected an http(s) URL"},
		{name: "upstream wrong key", yaml: "mcp:\n  agents: {}\n", wantErr: `warden.yaml:2: mcp: unknown key "agents" (want servers)`},
		{name: "upstream bad name", yaml: "a2a:\n  agents:\n    ok: {url: \"http://h\"}\n    a/b: {url: \"http://h\"}\n", wantErr: "warden.yaml:4: a2a.agents.a/b: a name may hold letters, digits, '-', '_' and '.'"},
		{name: "upstream header variable unset", yaml: "mcp:\n  servers:\n    x:\n      url: \"http://h\"\n      headers: {Authorization: \"${UP_TOKEN_UNSET}\"}\n", wantErr: "warden.yaml:5: mcp.servers.x.headers.Authorization: environment variable UP_TOKEN_UNSET is not set"},
		{name: "policies not a list", yaml: "policies: {a: b}\n", wantErr: "warden.yaml:1: policies: expected a list"},
		{name: "shadow set paths", yaml: "policies: [./live]\nshadow: [./candidate, /abs/next.yaml]\n",
			check: func(t *testing.T, c *Config) {
				want := []string{"/etc/warden/candidate", "/abs/next.yaml"}
				if strings.Join(c.Shadow, ",") != strings.Join(want, ",") || len(c.Policies) != 1 {
					t.Fatalf("shadow %v, policies %v; want shadow %v", c.Shadow, c.Policies, want)
				}
			}},
		{name: "single shadow path", yaml: "shadow: next.yaml\n", check: func(t *testing.T, c *Config) {
			if len(c.Shadow) != 1 || c.Shadow[0] != "/etc/warden/next.yaml" {
				t.Fatalf("shadow %v", c.Shadow)
			}
		}},
		{name: "empty shadow is none", yaml: "shadow:\n", check: func(t *testing.T, c *Config) {
			if len(c.Shadow) != 0 {
				t.Fatalf("shadow %v", c.Shadow)
			}
		}},
		{name: "shadow not a list", yaml: "defaultDecision: deny\nshadow: {a: b}\n", wantErr: "warden.yaml:2: shadow: expected a list"},
		{name: "shadow empty entry names its line", yaml: "shadow:\n  - ./a\n  - \"\"\n", wantErr: "warden.yaml:3: shadow[1]: empty path"},
		{name: "shadow entry not a path", yaml: "shadow:\n  - ./a\n  - {b: c}\n", wantErr: "warden.yaml:3: shadow[1]: expected a string"},
		{name: "syntax error", yaml: "a: b\n  c: d\n", wantErr: "warden.yaml:2:"},
		{name: "not a mapping", yaml: "- a\n", wantErr: "warden.yaml:1: expected a mapping"},
		{name: "default limits", yaml: "", check: func(t *testing.T, c *Config) {
			if c.Limits != DefaultLimits() || c.Limits.Batch != 1000 || c.Limits.HookProcs != 8 || c.Limits.Connections != 4096 {
				t.Fatalf("limits %+v", c.Limits)
			}
		}},
		{name: "limits", yaml: "hooks:\n  - {name: h, events: [tool.pre_call], command: [true]}\nlimits: {batch: 10, response_bytes: 1MiB, connections: 64, header_timeout: 2s, body_timeout: 5s, hook_procs: 2, runs_bytes: 64KiB, tenant_streams: 4}\n",
			check: func(t *testing.T, c *Config) {
				want := Limits{Batch: 10, ResponseBytes: 1 << 20, Connections: 64, HeaderTimeout: 2 * time.Second, BodyTimeout: 5 * time.Second, HookProcs: 2, RunsBytes: 64 << 10, TenantStreams: 4}
				if c.Limits != want {
					t.Fatalf("limits %+v, want %+v", c.Limits, want)
				}
				if c.Hooks[0].MaxProcs != 2 {
					t.Fatalf("hook MaxProcs %d, want limits.hook_procs", c.Hooks[0].MaxProcs)
				}
			}},
		{name: "limits bad tenant_streams", yaml: "limits:\n  tenant_streams: 0\n", wantErr: `warden.yaml:2: limits.tenant_streams: expected a whole number in 1..10000, got "0"`},
		{name: "limits bad batch", yaml: "limits:\n  batch: 0\n", wantErr: `warden.yaml:2: limits.batch: expected a whole number in 1..1000000, got "0"`},
		{name: "limits bad size", yaml: "limits:\n  connections: 10\n  runs_bytes: lots\n", wantErr: `warden.yaml:3: limits.runs_bytes: expected a size`},
		{name: "limits bad duration", yaml: "limits:\n  body_timeout: forever\n", wantErr: `warden.yaml:2: limits.body_timeout: expected a duration`},
		{name: "limits unknown key", yaml: "limits:\n  batches: 3\n", wantErr: `warden.yaml:2: limits: unknown key "batches"`},
		{name: "limits not a mapping", yaml: "limits: 3\n", wantErr: `warden.yaml:1: limits: expected a mapping`},
	}
	t.Setenv("UP_TOKEN", "t0k")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("/etc/warden/warden.yaml", []byte(tt.yaml))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}
