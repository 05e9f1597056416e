package stream_test

import (
	"testing"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden/stream"
)

// Whatever a record's tenant, surface and decision hold, its subject is a
// literal NATS subject of exactly four more tokens under the prefix.
func FuzzSubject(f *testing.F) {
	for _, s := range [][3]string{{"", "aos", "deny"}, {"a.b", "*", ">"}, {"x y\t", "\x00", "ünï"}, {"..", ".", ""}} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, tenant, surface, decision string) {
		subj := stream.Subject("warden.decisions", &audit.Record{Tenant: tenant, Surface: surface, Decision: decision})
		if err := stream.ValidSubject(subj); err != nil {
			t.Fatalf("Subject(%q, %q, %q) = %q: %v", tenant, surface, decision, subj, err)
		}
		for _, s := range []string{tenant, surface, decision} {
			if tok := stream.Token(s); len(tok) == 0 || len(tok) > 64 {
				t.Fatalf("Token(%q) = %q", s, tok)
			}
		}
	})
}
