package detect

import (
	"strings"
	"testing"
)

// benchText is ~2 KB of ordinary agent traffic: prose, a little markdown and
// code, numbers, dates, versions and punctuation, but no PII, secrets or
// injection.
var benchText = strings.Repeat(`The quarterly report for Q3 2024 is attached. Revenue grew 12.5% to $4.2M
compared with last year, and churn fell below 3%. Please review section 2.1 before
the meeting on 2024-10-15 at 10:30 (room B-204). The deploy of v2.10.3 went out on
Tuesday; build 1842 passed all 312 tests in 4m12s. Next steps: update the README,
rename getUserName() to userName(), and bump the API client to 1.4.0. Note: the
staging cluster uses 3 nodes with 16 GiB each; costs are about 0.42 USD per hour.
Thanks, and let me know if you have questions about the new onboarding flow!
`, 4)[:2048]

func BenchmarkPII(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		if PII(benchText) != nil {
			b.Fatal("unexpected PII")
		}
	}
}

func BenchmarkSecrets(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		if Secrets(benchText) != nil {
			b.Fatal("unexpected secret")
		}
	}
}

func BenchmarkInjection(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		if Injection(benchText) >= InjectionThreshold {
			b.Fatal("unexpected injection")
		}
	}
}

func BenchmarkFindAll(b *testing.B) {
	kinds := []string{"pii", "secrets"}
	b.ReportAllocs()
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		if Find(benchText, kinds) != nil {
			b.Fatal("unexpected match")
		}
	}
}

func BenchmarkRedactHit(b *testing.B) {
	s := benchText[:1500] + " contact jane@example.com, +1 555 234 5678, key AKIAIOSFODNN7EXAMPLE"
	kinds := []string{"pii", "secrets"}
	b.ReportAllocs()
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		Redact(s, kinds)
	}
}
