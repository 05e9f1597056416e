package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/config"
)

func TestTokenNew(t *testing.T) {
	code, out, errs := cli(t, "", "token", "new", "--name", "agents", "--scopes", "decide,read", "--tenant", "acme")
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], auth.TokenPrefix) || !strings.HasPrefix(lines[2], "- {") {
		t.Fatalf("output:\n%s", out)
	}
	tok := lines[0]
	if strings.Count(out, tok) != 1 {
		t.Errorf("the token is printed more than once")
	}
	// The printed entry is a config that accepts the printed token.
	c, err := config.Parse("w.yaml", []byte("auth:\n  tokens:\n    "+lines[2]+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	got, ok := c.Auth.Lookup(tok)
	if !ok || got.Name != "agents" || got.Tenant != "acme" || got.Scopes != auth.Decide|auth.Read {
		t.Errorf("entry %q → %+v %v", lines[2], got, ok)
	}
	_, out2, _ := cli(t, "", "token", "new", "--name", "agents", "--scopes", "decide")
	if strings.HasPrefix(out2, tok) {
		t.Error("two tokens are the same")
	}
	for _, args := range [][]string{
		{"token"}, {"token", "old"}, {"token", "new", "--scopes", "read"}, {"token", "new", "--name", "x"},
		{"token", "new", "--name", "x", "--scopes", "write"}, {"token", "new", "--name", "a b", "--scopes", "read"},
	} {
		if code, out, errs := cli(t, "", args...); code != exitError || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%q: exit %d, out %q, err %q", args, code, out, errs)
		}
	}
}

// TestServeRefusesOpenNonLoopback: no auth and a non-loopback address is
// one line and exit 1, before anything is opened.
func TestServeRefusesOpenNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0", "192.0.2.1:0"} {
		data := filepath.Join(t.TempDir(), "data")
		code, out, errs := cli(t, "", "serve", "--addr", addr, "--data", data)
		if code != exitError || out != "" || strings.Count(errs, "\n") != 1 ||
			!strings.Contains(errs, "auth.tokens") || !strings.Contains(errs, "--insecure") {
			t.Errorf("%s: exit %d, out %q, err %q", addr, code, out, errs)
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Errorf("%s: the data directory was created before the refusal (%v)", addr, err)
		}
	}
}

func TestLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8787": true, "127.1.2.3:1": true, "[::1]:8787": true, "localhost:8787": true,
		"0.0.0.0:8787": false, "[::]:8787": false, ":8787": false, "192.168.1.10:8787": false,
		"10.0.0.1:80": false, "not-an-addr": false, "host.invalid:80": false,
	} {
		if got := loopbackAddr(addr); got != want {
			t.Errorf("loopbackAddr(%q) = %v, want %v", addr, got, want)
		}
	}
}
