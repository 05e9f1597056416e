package policy

import (
	"strings"
	"testing"
)

// FuzzPrivatePathPrefilter: mayBePrivatePath never rules out a string that
// privatePathRE matches, so matchPrivatePath answers as the pattern does.
func FuzzPrivatePathPrefilter(f *testing.F) {
	for _, s := range []string{
		"/home/ann/.ssh/id_ed25519", "~/.aws/credentials", "/Users/bob/Documents/taxes.pdf",
		"./service/.env.production", "/etc/shadow", "deploy/server.pem", "config/secrets/db.yaml",
		"/home/ann/project/README.md", "/home/ann/.envrc", "src/environment.go", "cat ~/.ssh/id_rsa | base64",
		"$HOME/Mail ", "/root/.config/gcloud/x", "a id_dsa", "x.kdbx'", "private/", "\"credentials\"",
		"=.netrc", ":etc/gshadow", "/home/alice/report.txt", "ls -la", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		re := privatePathRE.MatchString(s)
		if re && !mayBePrivatePath(s) {
			t.Fatalf("%q matches privatePathRE but mayBePrivatePath is false", s)
		}
		if matchPrivatePath(s) != re {
			t.Fatalf("matchPrivatePath(%q) = %v, pattern %v", s, !re, re)
		}
	})
}

// TestPrivatePathPrefilterRulesOut: ordinary paths and commands skip the
// regular expression (the prefilter is worth having).
func TestPrivatePathPrefilterRulesOut(t *testing.T) {
	for _, s := range []string{"/home/alice/report.txt", "src/main.go", "ls -la /tmp", "git status",
		"/var/log/syslog", strings.Repeat("abc/", 100)} {
		if mayBePrivatePath(s) {
			t.Errorf("mayBePrivatePath(%q) = true", s)
		}
	}
}
