package sealid

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/conf"
)

// TestConfig: the gateways: section decodes its keys and age, prints no
// key, and makes a Sealer that opens what another replica with the same
// keys sealed.
func TestConfig(t *testing.T) {
	key := strings.Repeat("ab", KeySize)
	c := DefaultConfig()
	if errs := conf.DecodeYAML("w.yaml", "gateways", []byte("session_key: [\"hex:"+key+"\"]\nsession_max_age: 2d\n"), &c); len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(c.SessionKeys) != 1 || !bytes.Equal(c.SessionKeys[0], bytes.Repeat([]byte{0xab}, KeySize)) || c.SessionMaxAge != 48*time.Hour {
		t.Fatalf("decoded %v", c)
	}
	for _, s := range []string{fmt.Sprintf("%v %+v %#v %s", c, c, c, c.SessionKeys), fmt.Sprintf("%v %#v", c.SessionKeys[0], c.SessionKeys[0])} {
		if strings.Contains(s, "abab") || strings.Contains(s, "171") {
			t.Fatalf("a key is printed: %s", s)
		}
	}
	a, err := c.Sealer()
	if err != nil || a.Random() || a.MaxAge() != 48*time.Hour {
		t.Fatalf("Sealer: %v %v", a, err)
	}
	b, _ := c.Sealer()
	id, err := a.Seal(Binding{Kind: "mcp-session", Server: "s"}, []byte("p"))
	if err != nil {
		t.Fatal(err)
	}
	if p, err := b.Open(Binding{Kind: "mcp-session", Server: "s"}, id); err != nil || string(p) != "p" {
		t.Fatalf("open: %q %v", p, err)
	}
	if s, err := DefaultConfig().Sealer(); err != nil || !s.Random() || s.MaxAge() != DefaultMaxAge {
		t.Fatalf("default: %v %v", s, err)
	}
}
