package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shadowRecord is what the shadow test reads of a record.
type shadowRecord struct {
	ID       string `json:"id"`
	Decision string `json:"decision"`
	Results  []struct {
		Guardian string `json:"guardian"`
		PolicyID string `json:"policy_id"`
		Decision string `json:"decision"`
		Mode     string `json:"mode"`
		Kind     string `json:"kind"`
	} `json:"results"`
}

// has reports whether r has a result of guardian, policy (any when ""),
// decision and mode.
func (r shadowRecord) has(guardian, policy, decision, mode string) bool {
	for _, res := range r.Results {
		if res.Guardian == guardian && (policy == "" || res.PolicyID == policy) && res.Decision == decision && res.Mode == mode {
			return true
		}
	}
	return false
}

// shadowVerdict is the decision of r's shadow set summary ("" none).
func (r shadowRecord) shadowVerdict() string {
	for _, res := range r.Results {
		if res.Kind == "shadow_set" && res.Mode == "shadow" {
			return res.Decision
		}
	}
	return ""
}

// newestRun GETs /api/runs?limit=1 with query and returns the record.
func newestRun(t *testing.T, url, query string) shadowRecord {
	t.Helper()
	resp, err := http.Get(url + "/api/runs?limit=1" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct{ Runs []shadowRecord }
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || len(page.Runs) != 1 {
		t.Fatalf("/api/runs%s: %v, %d runs", query, err, len(page.Runs))
	}
	return page.Runs[0]
}

// TestShadowSet is issue 11's shadow acceptance on a served warden: a live
// deny with a shadow allow is answered deny over /aos and recorded with
// both, a shadow deny with a live allow is answered allow; the shadow set
// reloads on SIGHUP and on a file change, and a broken shadow file keeps
// the previous shadow set.
func TestShadowSet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the binary")
	}
	bin := wardenBinary(t)
	dir := t.TempDir()
	live := filepath.Join(dir, "live.yaml")
	cand := filepath.Join(dir, "cand.yaml")
	writeAtomic := func(path, s string) {
		t.Helper()
		if err := os.WriteFile(path+".tmp", []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			t.Fatal(err)
		}
	}
	writeAtomic(live, policyDoc("deny"))
	writeAtomic(cand, policyDoc("allow"))
	data := filepath.Join(dir, "data")
	s := startServer(t, bin, "--data", data, "--policy", live, "--shadow-policy", cand)

	// A live deny, a shadow allow: answered deny, recorded with both.
	if got := decisionOf(t, s.url); got != "deny" {
		t.Fatalf("answer %s, want the live deny", got)
	}
	r := newestRun(t, s.url, "&disagree=shadow")
	if r.Decision != "deny" || !r.has("policy", "gate-deploys", "deny", "enforce") ||
		!r.has("shadow", "gate-deploys", "allow", "shadow") || r.shadowVerdict() != "allow" {
		t.Fatalf("record %+v: want the live deny and the shadow allow", r)
	}
	out, err := exec.Command(bin, "runs", "--data", data, "--last", "1").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "deny (shadow: allow)") {
		t.Fatalf("warden runs: %v\n%s", err, out)
	}

	// A broken shadow file: SIGHUP keeps the previous shadow set (WARN).
	writeAtomic(cand, policyDoc("deny")+"when: 'tool.name =='\n")
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the broken shadow file is reported", func() bool {
		o := s.out.String()
		return strings.Contains(o, "level=WARN") && strings.Contains(o, "set=shadow") && strings.Contains(o, "cand.yaml:")
	})
	decisionOf(t, s.url)
	if r := newestRun(t, s.url, ""); r.shadowVerdict() != "allow" {
		t.Fatalf("after a broken shadow file the previous shadow set must stay: %+v\n%s", r, s.out)
	}

	// A fixed file is picked up by the watcher: the candidate now agrees.
	writeAtomic(cand, policyDoc("deny"))
	eventually(t, 5*time.Second, "the file watcher reloads the shadow set", func() bool {
		return decisionOf(t, s.url) == "deny" && newestRun(t, s.url, "").shadowVerdict() == "deny"
	})

	// A shadow deny with a live allow is answered allow.
	writeAtomic(live, policyDoc("allow"))
	eventually(t, 5*time.Second, "the live set reloads", func() bool { return decisionOf(t, s.url) == "allow" })
	if r := newestRun(t, s.url, "&disagree=shadow"); r.Decision != "allow" || !r.has("policy", "gate-deploys", "allow", "enforce") ||
		!r.has("shadow", "gate-deploys", "deny", "shadow") || r.shadowVerdict() != "deny" {
		t.Fatalf("record %+v: want the live allow and the shadow deny", r)
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := s.wait(t, 10*time.Second); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, s.out)
	}
}
