package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/sigkey"
)

func TestKeysNew(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		alg  sigkey.Alg
	}{
		{"default ml-dsa-65", []string{"--out", filepath.Join(dir, "a")}, sigkey.MLDSA65},
		{"ml-dsa-65", []string{"--alg", "ml-dsa-65", "--out", filepath.Join(dir, "b")}, sigkey.MLDSA65},
		{"ACS name", []string{"--alg", "ML-DSA-65", "--out", filepath.Join(dir, "c")}, sigkey.MLDSA65},
		{"slh-dsa-128s", []string{"--alg", "slh-dsa-128s", "--out", filepath.Join(dir, "d")}, sigkey.SLHDSA128s},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := tc.args[len(tc.args)-1]
			code, out, errs := cli(t, "", append([]string{"keys", "new"}, tc.args...)...)
			if code != exitOK || errs != "" {
				t.Fatalf("exit %d: %s", code, errs)
			}
			fi, err := os.Stat(prefix)
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("private key mode: %v %v", fi.Mode(), err)
			}
			k, err := sigkey.LoadPrivateKey(prefix)
			if err != nil || k.Alg() != tc.alg {
				t.Fatalf("load: %v (alg %v)", err, k.Alg())
			}
			p, err := sigkey.LoadPublicKey(prefix + ".pub")
			if err != nil || !p.Equal(k.Public()) {
				t.Fatalf("public key file: %v", err)
			}
			if !strings.Contains(out, "key_id: "+k.KeyID()+"\n") || !strings.Contains(out, "algorithm: "+tc.alg.ACSName()) {
				t.Errorf("output does not name the key id / algorithm:\n%s", out)
			}
			b, _ := os.ReadFile(prefix)
			if strings.Contains(out, strings.Split(string(b), "\n")[1]) {
				t.Error("the private key is printed")
			}
			// Overwrite refused, the key left as it was; --force replaces it.
			code, out, errs = cli(t, "", append([]string{"keys", "new"}, tc.args...)...)
			if code != exitError || out != "" || !strings.Contains(errs, "exists (use --force") {
				t.Errorf("second run: exit %d, out %q, err %q", code, out, errs)
			}
			if b2, _ := os.ReadFile(prefix); string(b2) != string(b) {
				t.Error("the key was overwritten without --force")
			}
			code, _, errs = cli(t, "", append([]string{"keys", "new", "--force"}, tc.args...)...)
			if code != exitOK {
				t.Fatalf("--force: %s", errs)
			}
			if b2, _ := os.ReadFile(prefix); string(b2) == string(b) {
				t.Error("--force did not replace the key")
			}
		})
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"keys"}, "expected 'keys new"},
		{[]string{"keys", "old"}, "expected 'keys new"},
		{[]string{"keys", "new", "--alg", "rsa", "--out", filepath.Join(dir, "x")}, `--alg: expected ml-dsa-65 or slh-dsa-128s, got "rsa"`},
		{[]string{"keys", "new", "--alg", "ed25519", "--out", filepath.Join(dir, "x")}, `got "ed25519"`},
		{[]string{"keys", "new", "--out", ""}, "--out must name a file"},
		{[]string{"keys", "new", "--out", filepath.Join(dir, "x"), "extra"}, `unexpected argument "extra"`},
		{[]string{"keys", "new", "--out", filepath.Join(dir, "no", "such", "dir", "k")}, "no such file or directory"},
		{[]string{"keys", "new", "--bogus"}, "flag provided but not defined"},
	} {
		code, out, errs := cli(t, "", tc.args...)
		if code != exitError || out != "" || !strings.Contains(errs, tc.want) {
			t.Errorf("%q: exit %d, out %q, err %q (want %q)", tc.args, code, out, errs, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
		t.Error("a refused run wrote a key")
	}
}
