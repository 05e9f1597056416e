package config

import (
	"strings"
	"testing"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/auth"
)

func TestTenants(t *testing.T) {
	src := "tenants:\n" +
		"  acme: {policies: [./acme, /abs/shared.yaml], defaultDecision: deny}\n" +
		"  globex:\n    policies: globex.yaml\n" +
		"  initech: {}\n"
	c, err := Parse("/etc/warden/warden.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	acme, globex, initech := c.Tenants["acme"], c.Tenants["globex"], c.Tenants["initech"]
	if acme.Name != "acme" || strings.Join(acme.Policies, ",") != "/etc/warden/acme,/abs/shared.yaml" || acme.DefaultDecision.Verdict() != warden.Deny {
		t.Errorf("acme %+v", acme)
	}
	if globex.Name != "globex" || strings.Join(globex.Policies, ",") != "/etc/warden/globex.yaml" || globex.DefaultDecision.Verdict() != warden.Abstain {
		t.Errorf("globex %+v", globex)
	}
	if initech.Name != "initech" || len(initech.Policies) != 0 {
		t.Errorf("initech %+v", initech)
	}
	if got := strings.Join(c.TenantNames(), ","); got != "acme,globex,initech" {
		t.Errorf("names %s", got)
	}

	sum := auth.Hash("wdn_x")
	for _, tt := range []struct{ name, src, want string }{
		{"not a mapping", "tenants: [acme]\n", "w.yaml:1: tenants: expected a mapping"},
		{"bad name through an alias", "x: &t\n  a/b: {}\ntenants: *t\n", "w.yaml:2: tenants.a/b: a name may hold"},
		{"bad name at its key", "tenants:\n  a/b:\n    defaultDecision: deny\n", "w.yaml:2: tenants.a/b: a name may hold letters, digits, '-', '_' and '.'"},
		{"declared twice", "tenants:\n  acme: {}\n  acme: {}\n", `w.yaml:3: tenants: key "acme" appears twice`},
		{"entry not a mapping", "tenants:\n  acme: [x]\n", "w.yaml:2: tenants.acme: expected a mapping with policies, defaultDecision"},
		{"bad default", "tenants:\n  acme:\n    policies: [a]\n    defaultDecision: ask\n", `w.yaml:4: tenants.acme.defaultDecision: expected allow or deny, got "ask"`},
		{"unknown key", "tenants:\n  acme: {policy: [x]}\n", `w.yaml:2: tenants.acme: unknown key "policy" (want policies, defaultDecision)`},
		{"empty path at its line", "tenants:\n  acme:\n    policies:\n      - a\n      - \"\"\n", "w.yaml:5: tenants.acme.policies[1]: empty path"},
		{"policies not a list", "tenants:\n  acme: {policies: {a: b}}\n", "w.yaml:2: tenants.acme.policies: expected a list"},
		{"undeclared tenant", "auth:\n  tokens:\n    - {name: a, sha256: " + sum + ", scopes: [decide], tenant: acmee}\ntenants:\n  acme: {}\n",
			`w.yaml:1: auth.tokens a: tenant "acmee" is not declared under tenants: (declared: [acme])`},
		{"undeclared client tenant", "tls: {cert: c.pem, key: k.pem, client_ca: ca.pem}\nauth:\n  clients:\n    - {subject: \"CN=x\", scopes: [decide], tenant: acmee}\ntenants:\n  acme: {}\n",
			`w.yaml:1: auth.clients CN=x: tenant "acmee" is not declared under tenants:`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("w.yaml", []byte(tt.src))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want containing %q", err, tt.want)
			}
		})
	}
}

func TestPathsNullEntry(t *testing.T) {
	for src, want := range map[string]string{
		"policies: [a, ~]\n":    "w.yaml:1: policies[1]: expected a file or directory path",
		"shadow:\n  - a\n  -\n": "w.yaml:3: shadow[1]: expected a file or directory path",
		"policies: \"\"\n":      "w.yaml:1: policies[0]: empty path",
	} {
		if _, err := Parse("w.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want containing %q", src, err, want)
		}
	}
}
