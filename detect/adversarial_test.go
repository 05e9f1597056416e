package detect

import (
	"strings"
	"testing"
	"time"
)

// TestAdversarialLinear runs every detector over large repetitive inputs
// built to trigger re-scanning; each must stay roughly linear.
func TestAdversarialLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	units := []string{
		"eyJ", "eyJa.", "@", "a@", ".1", "1.", "1:", ":a", "::", "1 ", "1-", "+1 ", "(1) ",
		"-----BEGIN PRIVATE KEY-----", "-----END X-----", "AKIA", "ghp_", "github_pat_", "sk_live_",
		"sk-", "xoxb-", "AIza", "token=", "token:", "api_key=a1", "DE89", "A", "123-45-", "ignore all ",
		"you are now ", "-----BEGIN PRIVATE KEY-----\n-----END X-----\n", "token=token=", "1 1-", "ignore your the ", "\u200b", "\u200d", "\U000e0041", "\u202e", "\xf3\xa0", "a",
	}
	const size = 64 << 10
	for _, u := range units {
		s := strings.Repeat(u, size/len(u))
		start := time.Now()
		Find(s, []string{"pii", "secrets"})
		Redact(s, []string{"pii", "secrets"})
		Injection(s)
		PII(s)
		Secrets(s)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%q x %d: %v", u, size/len(u), d)
		}
	}
}
