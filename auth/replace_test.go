package auth

import (
	"bytes"
	"slices"
	"sync"
	"testing"
)

// TestReplace: a reload puts other credentials in force at once — a
// removed token, and the sessions of a removed or rehashed token, stop
// working; a new one works — while requests are being checked (run with
// -race), and says what changed by name only.
func TestReplace(t *testing.T) {
	ops := Token{Name: "ops", SHA256: mustHash(t, "wdn_ops"), Scopes: Read}
	gone := Token{Name: "gone", SHA256: mustHash(t, "wdn_gone"), Scopes: Decide, Tenant: "acme"}
	moved := Token{Name: "moved", SHA256: mustHash(t, "wdn_moved"), Scopes: Read}
	cfg := &Config{Tokens: []Token{ops, gone, moved}, Clients: []Client{{Subject: "CN=a", Scopes: Decide}}}
	s := NewSessions(bytes.Repeat([]byte{3}, SessionKeySize), cfg)
	goneCookie, _ := s.Issue(gone)
	movedCookie, _ := s.Issue(moved)
	opsCookie, _ := s.Issue(ops)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				cfg.Lookup("wdn_ops")
				cfg.LookupSubject("CN=a")
				cfg.Enabled()
				s.Check(opsCookie)
			}
		}()
	}

	rehashed := moved
	rehashed.SHA256 = mustHash(t, "wdn_moved2")
	fresh := Token{Name: "fresh", SHA256: mustHash(t, "wdn_fresh"), Scopes: Approve}
	opsMore := ops
	opsMore.Scopes = Read | Approve
	ch := cfg.Replace(Config{Tokens: []Token{opsMore, rehashed, fresh}, Clients: []Client{{Subject: "CN=b", Scopes: Read}}})
	close(stop)
	wg.Wait()

	want := Changes{Added: []string{"client CN=b", "token fresh"}, Removed: []string{"client CN=a", "token gone"}, Changed: []string{"token moved", "token ops"}}
	if !slices.Equal(ch.Added, want.Added) || !slices.Equal(ch.Removed, want.Removed) || !slices.Equal(ch.Changed, want.Changed) {
		t.Errorf("changes %+v, want %+v", ch, want)
	}
	if _, ok := cfg.Lookup("wdn_gone"); ok {
		t.Error("a removed token still works")
	}
	if _, ok := cfg.LookupSubject("CN=a"); ok {
		t.Error("a removed client still works")
	}
	for name, c := range map[string]string{"removed": goneCookie, "rehashed": movedCookie} {
		if _, ok := s.Check(c); ok {
			t.Errorf("the session of a %s token still works", name)
		}
	}
	if tok, ok := s.Check(opsCookie); !ok || tok.Scopes != Read|Approve {
		t.Errorf("a kept token's session: %v %v (its scopes as reloaded)", tok, ok)
	}
	if tok, ok := cfg.Lookup("wdn_fresh"); !ok || tok.Name != "fresh" {
		t.Error("an added token does not work")
	}
	if ch := cfg.Replace(cfg.Snapshot()); !ch.Empty() {
		t.Errorf("replacing with the same credentials: %+v", ch)
	}
}
