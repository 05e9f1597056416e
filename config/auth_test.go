package config

import (
	"strings"
	"testing"

	"github.com/wardenhq/warden/auth"
)

func TestParseAuth(t *testing.T) {
	h1, h2 := auth.Hash("wdn_one"), auth.Hash("wdn_two")
	good := "auth:\n  tokens:\n" +
		"    - {name: agents, sha256: " + h1 + ", scopes: [decide], tenant: acme}\n" +
		"    - {name: ops, sha256: " + strings.ToUpper(h2) + ", scopes: [read, approve]}\n" +
		"origins: [\"https://Console.example.com\", \"http://127.0.0.1:3000/\"]\n"
	c, err := Parse("/etc/warden/warden.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Auth.Enabled() || len(c.Auth.Tokens) != 2 {
		t.Fatalf("auth %+v", c.Auth)
	}
	if tok, ok := c.Auth.Lookup("wdn_one"); !ok || tok.Name != "agents" || tok.Tenant != "acme" || tok.Scopes != auth.Decide {
		t.Errorf("agents token: %+v %v", tok, ok)
	}
	if tok, ok := c.Auth.Lookup("wdn_two"); !ok || tok.Name != "ops" || tok.Scopes != auth.Read|auth.Approve {
		t.Errorf("ops token (upper-case hex): %+v %v", tok, ok)
	}
	if strings.Join(c.Origins, " ") != "https://console.example.com:443 http://127.0.0.1:3000" {
		t.Errorf("origins %q", c.Origins)
	}
	if c, err := Parse("w.yaml", []byte("defaultDecision: allow\n")); err != nil || c.Auth.Enabled() {
		t.Errorf("no auth: %+v %v", c, err)
	}

	for _, tt := range []struct{ name, yaml, want string }{
		{"short hash", "auth:\n  tokens:\n    - {name: a, sha256: abc, scopes: [decide]}\n", "w.yaml:3: auth.tokens[0].sha256: expected the token's sha256 as 64 hex digits, got 3 characters"},
		{"non-hex hash", "auth:\n  tokens:\n    - {name: a, sha256: " + strings.Repeat("g", 64) + ", scopes: [decide]}\n", "w.yaml:3: auth.tokens[0].sha256: expected"},
		{"unknown scope", "auth:\n  tokens:\n    - {name: a, sha256: " + h1 + ", scopes: [write]}\n", `w.yaml:3: auth.tokens[0].scopes: unknown scope "write"`},
		{"no scopes", "auth:\n  tokens:\n    - {name: a, sha256: " + h1 + "}\n", "w.yaml:3: auth.tokens[0].scopes: expected at least one"},
		{"duplicate name", "auth:\n  tokens:\n    - {name: a, sha256: " + h1 + ", scopes: [read]}\n    - {name: a, sha256: " + h2 + ", scopes: [read]}\n", `w.yaml:4: auth.tokens[1].name: "a" is used by another token`},
		{"duplicate hash", "auth:\n  tokens:\n    - {name: a, sha256: " + h1 + ", scopes: [read]}\n    - {name: b, sha256: " + h1 + ", scopes: [read]}\n", `w.yaml:4: auth.tokens[1].sha256: is the same as token "a"'s`},
		{"no name", "auth:\n  tokens:\n    - {sha256: " + h1 + ", scopes: [read]}\n", "w.yaml:3: auth.tokens[0]: name is required"},
		{"raw token", "auth:\n  tokens:\n    - {name: a, token: wdn_x, sha256: " + h1 + ", scopes: [read]}\n", "w.yaml:3: auth.tokens[0].token: the config holds the token's sha256, never the token"},
		{"unknown auth key", "auth:\n  clientz: []\n", `w.yaml:2: auth: unknown key "clientz"`},
		{"tokens not a list", "auth:\n  tokens: {}\n", "w.yaml:2: auth.tokens: expected a list"},
		{"origin with path", "origins: [\"https://a.example/x\"]\n", `w.yaml:1: origins: "https://a.example/x" is not an origin`},
		{"null origin", "origins: [\"null\"]\n", `w.yaml:1: origins: "null" is not an origin`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("w.yaml", []byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want containing %q", err, tt.want)
			}
		})
	}
}

func TestParseTLSAndClients(t *testing.T) {
	good := "tls: {cert: c.pem, key: k.pem, client_ca: ca.pem}\n" +
		"auth:\n  clients:\n    - {subject: \"CN=payments-agent\", scopes: [decide], tenant: acme}\n"
	c, err := Parse("/etc/warden/warden.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if c.TLS.Cert != "/etc/warden/c.pem" || c.TLS.ClientCA != "/etc/warden/ca.pem" || !c.TLS.Enabled() ||
		len(c.Auth.Clients) != 1 || c.Auth.Clients[0].Tenant != "acme" || !c.Auth.Enabled() {
		t.Fatalf("%+v %+v", c.TLS, c.Auth)
	}
	if cl, ok := c.Auth.LookupSubject("CN=payments-agent"); !ok || !cl.Scopes.Allows(auth.Decide) || cl.Scopes.Allows(auth.Read) {
		t.Fatalf("lookup %+v %v", cl, ok)
	}
	for src, want := range map[string]string{
		"tls: {cert: c.pem}\n":                                             "cert and key go together",
		"tls: {client_ca: ca.pem}\n":                                       "tls.client_ca: needs cert and key",
		"tls: {cert: c.pem, key: k.pem, bogus: x}\n":                       `unknown key "bogus"`,
		"auth:\n  clients:\n    - {subject: \"CN=a\", scopes: [decide]}\n": "auth.clients: needs tls.client_ca",
		"tls: {cert: c.pem, key: k.pem, client_ca: ca.pem}\nauth:\n  clients:\n    - {scopes: [decide]}\n":  "subject is required",
		"tls: {cert: c.pem, key: k.pem, client_ca: ca.pem}\nauth:\n  clients:\n    - {subject: \"CN=a\"}\n": "scopes: expected at least one",
	} {
		if _, err := Parse("w.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}
