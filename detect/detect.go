// Package detect finds PII, secrets and prompt-injection in text. It backs the
// policy functions pii(), secrets() and injection() and the redact modifier.
//
// PLACEHOLDER API — being replaced by the real implementation.
package detect

// Match is one finding: Kind over s[Start:End].
type Match struct {
	Kind       string
	Start, End int
}

// PIIKinds and SecretKinds list the detector kinds of each group.
var (
	PIIKinds    = []string{"email", "phone", "credit_card", "iban", "ssn", "ip_address"}
	SecretKinds = []string{"private_key", "aws_access_key", "github_token", "jwt", "api_key"}
)

// PII returns the sorted, distinct PII kinds found in s.
func PII(s string) []string { return nil }

// Secrets returns the sorted, distinct secret kinds found in s.
func Secrets(s string) []string { return nil }

// Injection returns a prompt-injection score in 0..1.
func Injection(s string) float64 { return 0 }

// ExpandKinds resolves kind names and the groups "pii" and "secrets" to kinds;
// an unknown name is an error.
func ExpandKinds(names []string) ([]string, error) { return names, nil }

// Find returns the non-overlapping matches of the given kinds in s, in order.
func Find(s string, kinds []string) []Match { return nil }

// Redact replaces every match of kinds in s with "[REDACTED:<kind>]" and
// reports whether anything changed.
func Redact(s string, kinds []string) (string, bool) { return s, false }
