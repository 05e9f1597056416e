package auth

import (
	"strings"
	"testing"
)

func mustHash(t *testing.T, tok string) [32]byte {
	t.Helper()
	h, err := ParseHash(Hash(tok))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestLookup(t *testing.T) {
	c := &Config{Tokens: []Token{
		{Name: "a", SHA256: mustHash(t, "wdn_alpha"), Scopes: Decide},
		{Name: "b", SHA256: mustHash(t, "wdn_beta"), Scopes: Read, Tenant: "acme"},
	}}
	for _, tt := range []struct {
		bearer, want string
	}{
		{"wdn_alpha", "a"}, {"wdn_beta", "b"},
		{"", ""}, {"wdn_alph", ""}, {"wdn_alphaX", ""}, {"wdn_", ""}, {"WDN_ALPHA", ""},
		{Hash("wdn_alpha"), ""}, // the stored hash is not a token
	} {
		tok, ok := c.Lookup(tt.bearer)
		if ok != (tt.want != "") || tok.Name != tt.want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", tt.bearer, tok.Name, ok, tt.want)
		}
	}
	if _, ok := (*Config)(nil).Lookup("x"); ok {
		t.Error("nil config matched")
	}
}

func TestScopes(t *testing.T) {
	s, err := ParseScopes("decide, read")
	if err != nil || s != Decide|Read || s.String() != "decide,read" {
		t.Fatalf("ParseScopes = %v (%s), %v", s, s, err)
	}
	if !s.Allows(Decide) || !s.Allows(Read) || s.Allows(Approve) || s.Allows(Admin) {
		t.Errorf("decide,read allows wrong things")
	}
	if !Admin.Allows(Decide) || !Admin.Allows(Read) || !Admin.Allows(Approve) {
		t.Errorf("admin does not allow everything")
	}
	if _, err := ParseScopes("decide,write"); err == nil || !strings.Contains(err.Error(), `"write"`) {
		t.Errorf("unknown scope: %v", err)
	}
}

func TestNewToken(t *testing.T) {
	tok, sum, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	tok2, _, _ := NewToken()
	if !strings.HasPrefix(tok, TokenPrefix) || len(tok) != len(TokenPrefix)+43 || tok == tok2 {
		t.Errorf("tokens %q %q", tok, tok2)
	}
	if sum != Hash(tok) || len(sum) != 64 {
		t.Errorf("sum %q", sum)
	}
	if _, err := ParseHash(sum[:63]); err == nil {
		t.Error("short hash accepted")
	}
	if _, err := ParseHash(strings.Repeat("z", 64)); err == nil {
		t.Error("non-hex hash accepted")
	}
}
