package main

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/config"
)

// reloadConfigDoc is a config with most sections set, tokens given as
// name → token, and extra appended as is.
func reloadConfigDoc(tokens map[string]string, extra string) string {
	var b strings.Builder
	b.WriteString(`defaultDecision: allow
tenants:
  acme: {}
limits:
  connections: 100
hooks:
  - name: audit
    events: ["steps/*"]
    mode: async
    when: 'tool.name == "deploy"'
    command: [/bin/true]
approvals:
  wait: 30s
`)
	if len(tokens) > 0 {
		b.WriteString("auth:\n  tokens:\n")
		for _, name := range []string{"ops", "agent", "acme-agent", "fresh", "newco-agent"} {
			if tok, ok := tokens[name]; ok {
				tenant := ""
				if strings.HasPrefix(name, "acme") {
					tenant = ", tenant: acme"
				} else if strings.HasPrefix(name, "newco") {
					tenant = ", tenant: newco"
				}
				fmt.Fprintf(&b, "    - {name: %s, sha256: %s, scopes: [read, decide]%s}\n", name, auth.Hash(tok), tenant)
			}
		}
	}
	b.WriteString(extra)
	return b.String()
}

// TestConfigReload: SIGHUP's reload of the config file puts its
// credentials in force — a removed token stops working, an added one
// works — and logs what changed by name only; what it cannot apply live
// (turning auth off or on, a new tenant's credentials, other keys, a file
// that does not load) is logged at WARN and changes nothing.
func TestConfigReload(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "warden.yaml")
	toks := map[string]string{"ops": "wdn_ops-secret-1", "agent": "wdn_agent-secret-2", "acme-agent": "wdn_acme-secret-3"}
	write := func(doc string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(reloadConfigDoc(toks, ""))
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	r := newConfigReload(file, cfg)
	cfg.Approvals.URL = "http://127.0.0.1:8787" // serve fills it in: not a change of the file
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	works := func(tok string) bool { _, ok := cfg.Auth.Lookup(tok); return ok }
	step := func(name, doc string) string {
		t.Helper()
		logs.Reset()
		write(doc)
		r.reload(log)
		out := logs.String()
		t.Logf("%s:\n%s", name, out)
		for _, tok := range []string{"wdn_ops-secret-1", "wdn_agent-secret-2", "wdn_acme-secret-3", "wdn_fresh-secret-4", "wdn_newco-secret-5"} {
			if strings.Contains(out, tok) || strings.Contains(out, auth.Hash(tok)) {
				t.Errorf("%s: the log holds a token or its hash", name)
			}
		}
		return out
	}

	out := step("unchanged", reloadConfigDoc(toks, ""))
	if !strings.Contains(out, "auth reloaded: no change") || strings.Contains(out, "need a restart") {
		t.Errorf("unchanged: %s", out)
	}

	// agent removed, fresh added, a limit changed.
	next := map[string]string{"ops": toks["ops"], "acme-agent": toks["acme-agent"], "fresh": "wdn_fresh-secret-4"}
	out = step("removed and added", strings.Replace(reloadConfigDoc(next, ""), "connections: 100", "connections: 200", 1))
	if works(toks["agent"]) || !works("wdn_fresh-secret-4") || !works(toks["ops"]) {
		t.Errorf("after the reload: agent %v, fresh %v, ops %v", works(toks["agent"]), works("wdn_fresh-secret-4"), works(toks["ops"]))
	}
	for _, want := range []string{`msg="auth reloaded"`, "added=\"token fresh\"", "removed=\"token agent\"", "keys=limits"} {
		if !strings.Contains(out, want) {
			t.Errorf("removed and added: no %s in the log", want)
		}
	}

	// A file that does not load, auth turned off, a new tenant: nothing
	// of it applies.
	out = step("broken", reloadConfigDoc(next, "")+"limits: [\n")
	if !strings.Contains(out, "config not reloaded") || !works("wdn_fresh-secret-4") {
		t.Errorf("broken file: %s", out)
	}
	out = step("auth off", reloadConfigDoc(nil, ""))
	if !strings.Contains(out, "turning authentication off needs a restart") || !works(toks["ops"]) {
		t.Errorf("auth off: %s", out)
	}
	withNewco := reloadConfigDoc(map[string]string{"ops": toks["ops"], "newco-agent": "wdn_newco-secret-5"}, "")
	withNewco = strings.Replace(withNewco, "  acme: {}\n", "  acme: {}\n  newco: {}\n", 1)
	out = step("new tenant", withNewco)
	if works("wdn_newco-secret-5") || !works(toks["ops"]) || works("wdn_fresh-secret-4") {
		t.Errorf("new tenant: newco %v, ops %v, fresh %v", works("wdn_newco-secret-5"), works(toks["ops"]), works("wdn_fresh-secret-4"))
	}
	for _, want := range []string{"token newco-agent left out", "keys=tenants\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("new tenant: no %q in the log", want)
		}
	}

	// Started without auth: turning it on needs a restart.
	write(reloadConfigDoc(nil, ""))
	open, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	r = newConfigReload(file, open)
	logs.Reset()
	write(reloadConfigDoc(toks, ""))
	r.reload(log)
	if !strings.Contains(logs.String(), "turning authentication on") || open.Auth.Enabled() {
		t.Errorf("auth on: %s", logs.String())
	}
}
