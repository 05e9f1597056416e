package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/sqlite"
)

const candidatePolicy = `id: cand-no-bash
version: "1"
events: ["steps/toolCallRequest"]
when: 'tool.name == "bash"'
decision: deny
`

// `warden check` compiles the config's shadow set and reports it; a broken
// one is a config error naming file:line, at check and at serve.
func TestCheckAndServeShadow(t *testing.T) {
	dir := t.TempDir()
	cand := writeFile(t, dir, "cand.yaml", candidatePolicy)
	bad := writeFile(t, dir, "bad.yaml", "id: x\nversion: \"1\"\nevents: [\"steps/*\"]\nwhen: 'tool.name =='\ndecision: deny\n")
	good := writeFile(t, dir, "good.yaml", "shadow: [cand.yaml]\n")
	broken := writeFile(t, dir, "broken.yaml", "shadow: [bad.yaml]\n")
	tenants := writeFile(t, dir, "tenants.yaml", "shadow: [cand.yaml]\ntenants:\n  acme: {policies: [good-policies.yaml]}\n")
	writeFile(t, dir, "good-policies.yaml", testPolicies)
	data := filepath.Join(dir, "data")
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"check reports the shadow set", []string{"check", "--config", good}, exitOK,
			[]string{"ok: " + packPolicies(t, 0) + " from the built-in pack,", "ok: shadow set: " + packPolicies(t, 1) + " from the built-in pack + " + cand + ", revision "}},
		{"check without the pack", []string{"check", "--config", good, "--builtin=false"}, exitOK, []string{"ok: shadow set: 1 policies from " + cand}},
		{"check a tenant's shadow set", []string{"check", "--config", tenants}, exitOK,
			[]string{"ok: tenant acme: shadow set: " + packPolicies(t, 3) + " from the built-in pack + " + cand + ", " + filepath.Join(dir, "good-policies.yaml")}},
		{"check a broken shadow set", []string{"check", "--config", broken}, exitError, []string{"shadow set: ", bad + ":4:"}},
		{"serve a broken --shadow-policy", []string{"serve", "--data", data, "--addr", "127.0.0.1:0", "--shadow-policy", bad}, exitError, []string{"shadow set: ", bad + ":4:"}},
		{"serve a broken shadow:", []string{"serve", "--data", data, "--addr", "127.0.0.1:0", "--config", broken}, exitError, []string{bad + ":4:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := cli(t, "", tt.args...)
			for _, w := range tt.want {
				if code != tt.code || !strings.Contains(out+errOut, w) {
					t.Fatalf("exit %d (want %d), output lacks %q:\n%s%s", code, tt.code, w, out, errOut)
				}
			}
		})
	}
}

// `warden runs` marks the records whose shadow set would have decided
// otherwise, and --disagree shadow keeps only those.
func TestRunsShadow(t *testing.T) {
	dir := t.TempDir()
	st, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC()
	sum := func(v string) warden.Result {
		return warden.Result{Guardian: warden.GuardianShadow, Kind: warden.KindShadowSet, Decision: v, Mode: warden.ModeShadow}
	}
	for i, r := range []*audit.Record{
		{ID: "agree", Decision: "allow", Results: []warden.Result{sum("allow")}},
		{ID: "none", Decision: "allow", Results: []warden.Result{}},
		{ID: "live-deny", Decision: "deny", PolicyID: "no-deploy", Results: []warden.Result{sum("allow")}},
	} {
		r.Time, r.Event, r.Surface, r.Input = now.Add(time.Duration(i-3)*time.Minute), "steps/toolCallRequest", "aos", json.RawMessage(`{}`)
		if err := st.Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := cli(t, "", "runs", "--data", dir)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != exitOK || len(lines) != 4 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	for i, want := range []string{" deny (shadow: allow) ", " allow ", " allow "} {
		if !strings.Contains(lines[i+1], want) || (i > 0 && strings.Contains(lines[i+1], "shadow")) {
			t.Errorf("row %d %q, want %q", i, lines[i+1], want)
		}
	}
	code, out, errOut = cli(t, "", "runs", "--data", dir, "--disagree", "shadow", "-o", "json")
	var recs []audit.Record
	if err := json.Unmarshal([]byte(out), &recs); code != exitOK || err != nil || len(recs) != 1 || recs[0].ID != "live-deny" {
		t.Fatalf("--disagree shadow: exit %d %v %+v %s", code, err, recs, errOut)
	}
	if s, ok := audit.ShadowSummary(recs[0].Results); !ok || s.Decision != "allow" {
		t.Errorf("-o json lacks the shadow result: %+v", recs[0].Results)
	}
	if code, _, errOut := cli(t, "", "runs", "--data", dir, "--disagree", "live"); code != exitError || !strings.Contains(errOut, "--disagree: expected shadow") {
		t.Errorf("--disagree live: exit %d, %q", code, errOut)
	}
}
