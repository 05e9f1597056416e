package auth

import (
	"strings"
	"testing"

	"github.com/wardenhq/warden/conf"
)

// decodeSection decodes src as the section key into dst with conf, the way
// the config does, and returns the errors' text.
func decodeSection(t *testing.T, key, src string, dst any) string {
	t.Helper()
	return conf.DecodeYAML("w.yaml", key, []byte(src), dst).Error()
}

func TestConfigDecode(t *testing.T) {
	h1, h2 := Hash("wdn_one"), Hash("wdn_two")
	var c Config
	src := "tokens:\n" +
		"  - name: agents\n    sha256: " + h1 + "\n    scopes: [decide]\n    tenant: acme\n" +
		"  - {name: ops, sha256: " + strings.ToUpper(h2) + ", scopes: [read, approve]}\n" +
		"clients:\n  - {subject: \"CN=payments-agent\", scopes: [admin], tenant: acme}\n"
	if errs := decodeSection(t, "auth", src, &c); errs != "" {
		t.Fatal(errs)
	}
	if tok, ok := c.Lookup("wdn_one"); !ok || tok.Name != "agents" || tok.Tenant != "acme" || tok.Scopes != Decide {
		t.Errorf("agents: %+v %v", tok, ok)
	}
	if tok, ok := c.Lookup("wdn_two"); !ok || tok.Name != "ops" || tok.Scopes != Read|Approve {
		t.Errorf("ops: %+v %v", tok, ok)
	}
	if cl, ok := c.LookupSubject("CN=payments-agent"); !ok || cl.Scopes != Admin || cl.Tenant != "acme" {
		t.Errorf("client: %+v %v", cl, ok)
	}

	// A sha256 that does not decode is one error, not also a missing one.
	if errs := decodeSection(t, "auth", "tokens:\n  - {name: a, sha256: abc, scopes: [decide]}\n", &Config{}); errs != "w.yaml:2: auth.tokens[0].sha256: expected the token's sha256 as 64 hex digits, got 3 characters" {
		t.Errorf("errors:\n%s", errs)
	}

	for _, tt := range []struct{ name, src, want string }{
		// Each error is at the line of the key at fault.
		{"block entry", "tokens:\n  - name: a\n    sha256: abc\n    scopes: [decide]\n", "w.yaml:3: auth.tokens[0].sha256: expected the token's sha256 as 64 hex digits, got 3 characters"},
		{"no sha256", "tokens:\n  - {name: a, scopes: [decide]}\n", "w.yaml:2: auth.tokens[0]: missing sha256"},
		{"bad name", "tokens:\n  - {name: a/b, sha256: " + h1 + ", scopes: [decide]}\n", `w.yaml:2: auth.tokens[0].name: "a/b": a name may hold letters, digits, '-', '_' and '.'`},
		{"bad tenant", "tokens:\n  - name: a\n    sha256: " + h1 + "\n    scopes: [decide]\n    tenant: a b\n", `w.yaml:5: auth.tokens[0].tenant: "a b": a name may hold`},
		{"scopes not a list", "tokens:\n  - {name: a, sha256: " + h1 + ", scopes: decide}\n", "w.yaml:2: auth.tokens[0].scopes: expected a list of decide, read, approve, admin"},
		{"entry not a mapping", "tokens:\n  - wdn_x\n", "w.yaml:2: auth.tokens[0]: expected a mapping with name, sha256, scopes, tenant"},
		{"duplicate subject", "clients:\n  - {subject: \"CN=a\", scopes: [read]}\n  - subject: \"CN=a\"\n    scopes: [read]\n", `w.yaml:3: auth.clients[1].subject: "CN=a" is listed twice`},
		{"client unknown key", "clients:\n  - {subject: \"CN=a\", scopes: [read], name: x}\n", `w.yaml:2: auth.clients[0]: unknown key "name" (want subject, scopes, tenant)`},
		{"client bad tenant", "clients:\n  - {subject: \"CN=a\", scopes: [read], tenant: \"a/b\"}\n", `w.yaml:2: auth.clients[0].tenant: "a/b": a name may hold`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var c Config
			if errs := decodeSection(t, "auth", tt.src, &c); !strings.Contains(errs, tt.want) {
				t.Fatalf("errors:\n%s\nwant:\n%s", errs, tt.want)
			}
		})
	}
}

func TestOriginsDecode(t *testing.T) {
	var o Origins
	if errs := decodeSection(t, "origins", "[\"https://Console.example.com\", \"http://127.0.0.1:3000/\"]\n", &o); errs != "" {
		t.Fatal(errs)
	}
	if strings.Join(o, " ") != "https://console.example.com:443 http://127.0.0.1:3000" {
		t.Fatalf("origins %q", o)
	}
	for src, want := range map[string]string{
		"https://a.example\n":        "w.yaml:1: origins: expected a list of origins (scheme://host[:port])",
		"[\"ftp://a.example\", x]\n": "w.yaml:1: origins: \"ftp://a.example\" is not an origin: expected http(s)://host[:port] with no path\nw.yaml:1: origins: \"x\" is not an origin",
	} {
		var o Origins
		if errs := decodeSection(t, "origins", src, &o); !strings.Contains(errs, want) {
			t.Errorf("%q: errors:\n%s\nwant:\n%s", src, errs, want)
		}
	}
}

func TestTLSDecode(t *testing.T) {
	var tc TLS
	if errs := decodeSection(t, "tls", "{cert: c.pem, key: k.pem, client_ca: ca.pem}\n", &tc); errs != "" || tc != (TLS{Cert: "c.pem", Key: "k.pem", ClientCA: "ca.pem"}) || !tc.Enabled() {
		t.Fatalf("%+v %s", tc, errs)
	}
	for src, want := range map[string]string{
		"{key: k.pem}\n":                        "w.yaml:1: tls: cert and key go together",
		"client_ca: ca.pem\n":                   "w.yaml:1: tls.client_ca: needs cert and key",
		"cert: c.pem\nkey: k.pem\nca: ca.pem\n": `w.yaml:3: tls: unknown key "ca" (want cert, key, client_ca)`,
		"cert: [c.pem]\nkey: k.pem\n":           "w.yaml:1: tls.cert: expected a string",
	} {
		var tc TLS
		if errs := decodeSection(t, "tls", src, &tc); !strings.Contains(errs, want) {
			t.Errorf("%q: errors:\n%s\nwant:\n%s", src, errs, want)
		}
	}
}
