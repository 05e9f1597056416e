package sigkey

import (
	"bytes"
	"encoding/base64"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden key files in testdata")

// counter is a deterministic "random" source: 0, 1, 2, …
type counter struct{ n byte }

func (c *counter) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = c.n
		c.n++
	}
	return len(p), nil
}

// TestGoldenKeyFiles pins the key file formats (docs/acs.md, "Key files")
// and the algorithms' encodings: a key generated from a fixed source
// writes exactly the files in testdata, those files parse back to the same
// key id, and a signature made once and stored there still verifies.
func TestGoldenKeyFiles(t *testing.T) {
	msg := []byte("warden golden message")
	for _, alg := range SigningAlgs {
		t.Run(string(alg), func(t *testing.T) {
			k, err := Generate(alg, &counter{})
			if err != nil {
				t.Fatal(err)
			}
			pub, _ := k.Public().MarshalText()
			base := filepath.Join("testdata", string(alg))
			files := map[string][]byte{".key": k.MarshalPrivate(), ".key.pub": append(pub, '\n'), ".keyid": []byte(k.KeyID() + "\n")}
			if *update {
				sig, err := k.Sign(msg)
				if err != nil {
					t.Fatal(err)
				}
				files[".sig"] = []byte(base64.StdEncoding.EncodeToString(sig) + "\n")
				for ext, b := range files {
					if err := os.WriteFile(base+ext, b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			for ext, want := range files {
				got, err := os.ReadFile(base + ext)
				if err != nil {
					t.Fatalf("%v (run go test ./sigkey -run Golden -update)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s%s differs from what the key writes", base, ext)
				}
			}
			p, err := ParsePublicKey(files[".key.pub"])
			if err != nil || p.KeyID() != k.KeyID() {
				t.Fatalf("golden public key: %v", err)
			}
			b64, err := os.ReadFile(base + ".sig")
			if err != nil {
				t.Fatal(err)
			}
			sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b64)))
			if err != nil || !p.Verify(msg, sig) {
				t.Errorf("the golden signature does not verify (%v)", err)
			}
		})
	}
}
