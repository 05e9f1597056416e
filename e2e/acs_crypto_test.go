package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cloudflare/circl/sign"
	"github.com/cloudflare/circl/sign/mldsa/mldsa65"

	"github.com/wardenhq/warden/internal/acsclient"
)

// TestACSCryptoMLDSA is issue 12's ACS-Crypto acceptance through the
// binary: `warden keys new` makes warden's ML-DSA-65 key, the agent's is
// made with circl; warden serves with acs.signing and acs.public_keys; the
// independent client signs every request with circl and verifies every
// answer with circl under the public key warden's .pub file holds (parsed
// here from its documented one-line form, not by warden's code).
func TestACSCryptoMLDSA(t *testing.T) {
	dir := t.TempDir()
	bin := wardenBinary(t)
	out, err := exec.Command(bin, "keys", "new", "--out", filepath.Join(dir, "warden.key")).CombinedOutput()
	if err != nil {
		t.Fatalf("keys new: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`key_id: ([0-9a-f]{32})\n`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("keys new printed no key id:\n%s", out)
	}
	serverKeyID := string(m[1])
	line, err := os.ReadFile(filepath.Join(dir, "warden.key.pub"))
	if err != nil {
		t.Fatal(err)
	}
	b64, ok := strings.CutPrefix(strings.TrimSpace(string(line)), "ml-dsa-65:")
	raw, err := base64.StdEncoding.DecodeString(b64)
	if !ok || err != nil {
		t.Fatalf("warden.key.pub is not ml-dsa-65:BASE64: %q", line)
	}
	serverPub, err := mldsa65.Scheme().UnmarshalBinaryPublicKey(raw)
	if err != nil {
		t.Fatal(err)
	}

	agentPub, agentKey, err := mldsa65.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.pub"), []byte("ml-dsa-65:"+base64.StdEncoding.EncodeToString(agentPub.Bytes())+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pol, err := filepath.Abs("../acs/testdata/policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "warden.yaml")
	conf := fmt.Sprintf("policies: [%q]\nacs:\n  signing: ml-dsa-65\n  signing_key: warden.key\n  public_keys: {agent-7: agent.pub}\n", pol)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, bin, "--config", cfg, "--data", filepath.Join(dir, "data"), "--builtin=false")

	ctx := context.Background()
	c := acsclient.New(acsclient.Options{URL: srv.url + "/acs", KeyID: "agent-7", SignKey: agentKey, AgentID: "e2e-pq-agent",
		GuardianKeys: map[string]sign.PublicKey{serverKeyID: serverPub}})
	ch := c.ClientHello([]string{"steps/toolCallRequest"})
	ch["profiles_supported"] = []string{"acs-core", "acs-crypto", "acs-audit"}
	hello, err := c.Call(ctx, "handshake/hello", ch)
	acsStep(t, c, hello, err, "allow", nil)
	// A Guardian with an ML-DSA-65 signing key accepts ACS-Crypto.
	if got := toStrings(hello.Result["profiles_accepted"]); !slices.Equal(got, []string{"acs-core", "acs-crypto", "acs-audit"}) {
		t.Errorf("profiles_accepted = %v", got)
	}
	if got := hello.Result["signature_algorithms_supported"]; !slices.Equal(toStrings(got), []string{"ML-DSA-65"}) || hello.Result["signatures_required"] != true {
		t.Fatalf("ServerHello: %s", hello.Raw)
	}
	for _, tc := range []struct{ cmd, want string }{{"ls", "allow"}, {"rm -rf /", "deny"}} {
		r, err := c.Call(ctx, "steps/toolCallRequest", bashCall(tc.cmd))
		if err == nil && r.Error != nil {
			t.Fatalf("%s: %s", tc.cmd, r.Raw)
		}
		acsStep(t, c, r, err, tc.want, nil)
		sig, _ := r.Result["signature"].(map[string]any)
		if sig["algorithm"] != "ML-DSA-65" || sig["key_id"] != serverKeyID {
			t.Fatalf("%s: signature %v", tc.cmd, sig)
		}
	}
	// An unsigned request and one signed by an unknown agent key: -32004.
	r, err := c.Call(ctx, "steps/toolCallRequest", bashCall("ls"), acsclient.Unsigned)
	if err != nil || r.ErrorCode() != -32004 {
		t.Fatalf("unsigned: %v %s", err, r.Raw)
	}
	_, otherKey, _ := mldsa65.GenerateKey(nil)
	e := c.Request("steps/toolCallRequest", bashCall("ls"))
	e.SignKey = otherKey
	if err := e.Sign(); err != nil {
		t.Fatal(err)
	}
	if r, err := c.Send(ctx, e); err != nil || r.ErrorCode() != -32004 {
		t.Fatalf("another key: %v %s", err, r.Raw)
	}
}

func toStrings(v any) []string {
	a, _ := v.([]any)
	out := []string{}
	for _, x := range a {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// bashCall is a toolCallRequest payload for Bash running cmd.
func bashCall(cmd string) map[string]any {
	return map[string]any{"tool": map[string]any{"name": "Bash"}, "arguments": map[string]any{"command": map[string]any{"value": cmd}}}
}
