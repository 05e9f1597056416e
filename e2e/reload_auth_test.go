package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wardenhq/warden/auth"
)

// TestAttackRemovedTokenAfterSIGHUP: a SIGHUP reloaded the policies but
// not the tokens, so a token removed from the config, and the console
// sessions signed in with it, kept working until a restart, and the log
// said nothing. Now the reload puts the config's credentials in force: the
// removed token and its session cookie get 401, a token added works, a
// kept one still does, and the log names what changed (never a token).
func TestAttackRemovedTokenAfterSIGHUP(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: builds and runs the warden binary; skipped with -short")
	}
	dir := t.TempDir()
	tokens := map[string]string{}
	for _, name := range []string{"ops", "keep", "fresh"} {
		tok, _, err := auth.NewToken()
		if err != nil {
			t.Fatal(err)
		}
		tokens[name] = tok
	}
	cfg := filepath.Join(dir, "warden.yaml")
	writeConfig := func(names ...string) {
		t.Helper()
		var b strings.Builder
		b.WriteString("auth:\n  tokens:\n")
		for _, n := range names {
			fmt.Fprintf(&b, "    - {name: %s, sha256: %s, scopes: [read]}\n", n, auth.Hash(tokens[n]))
		}
		if err := os.WriteFile(cfg+".tmp", []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(cfg+".tmp", cfg); err != nil {
			t.Fatal(err)
		}
	}
	writeConfig("ops", "keep")
	s := startServer(t, wardenBinary(t), "--config", cfg, "--data", filepath.Join(dir, "data"))

	// ops signs in to the console.
	req, _ := http.NewRequest("POST", s.url+"/api/session", strings.NewReader(`{"token":"`+tokens["ops"]+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", s.url)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == auth.SessionCookie {
			cookie = c
		}
	}
	if resp.StatusCode != 200 || cookie == nil {
		t.Fatalf("sign-in: %d, cookie %v", resp.StatusCode, cookie)
	}
	get := func(token string, c *http.Cookie) int {
		t.Helper()
		req, _ := http.NewRequest("GET", s.url+"/api/runs", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if c != nil {
			req.AddCookie(c)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if ops, session, fresh := get(tokens["ops"], nil), get("", cookie), get(tokens["fresh"], nil); ops != 200 || session != 200 || fresh != 401 {
		t.Fatalf("before the reload: ops %d, its session %d, fresh %d; want 200, 200, 401", ops, session, fresh)
	}

	writeConfig("keep", "fresh") // ops removed, fresh added
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end) && !strings.Contains(s.out.String(), `msg="auth reloaded"`); {
		time.Sleep(50 * time.Millisecond)
	}
	ops, session, keep, fresh := get(tokens["ops"], nil), get("", cookie), get(tokens["keep"], nil), get(tokens["fresh"], nil)
	if ops != 401 || session != 401 || keep != 200 || fresh != 200 {
		t.Errorf("after the reload: ops %d, its session %d, keep %d, fresh %d; want 401, 401, 200, 200", ops, session, keep, fresh)
	}
	out := s.out.String()
	for _, want := range []string{`added="token fresh"`, `removed="token ops"`, "signal=SIGHUP"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log has no %s", want)
		}
	}
	for name, tok := range tokens {
		if strings.Contains(out, tok) || strings.Contains(out, auth.Hash(tok)) {
			t.Errorf("the log holds token %s or its hash", name)
		}
	}
	if t.Failed() {
		t.Logf("warden serve output:\n%s", out)
	}
}
