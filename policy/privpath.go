package policy

import "strings"

// The literals one of which every match of privatePathRE contains, by the
// byte they start with (each alternative of the pattern has one):
//   - '/' then a home directory's private member (~/.ssh, /home/x/Mail, …);
//   - '.' then a secrets file's or a key file's extension (.env, .pem, …),
//     or a private dot directory (also reached through '/');
//   - "id_" (SSH keys), "etc/" (password files), "secret", "credential",
//     "private" (directories).
var (
	afterSlash = []string{".ssh", ".aws", ".gnupg", ".kube", ".docker", ".config/gcloud", ".password-store",
		"Documents", "Desktop", "Downloads", "Mail", ".mail"}
	afterDot = []string{"env", "netrc", "npmrc", "pypirc", "git-credentials", "pgpass",
		"pem", "key", "p12", "pfx", "kdbx"}
)

// mayBePrivatePath reports whether s contains one of the literals every
// match of privatePathRE contains: false means the pattern cannot match, so
// the regular expression (a backtracking scan from every position) runs
// only on the few strings that may match. FuzzPrivatePathPrefilter checks
// that it never says false of a matching string.
func mayBePrivatePath(s string) bool {
	for i := 0; i < len(s); i++ {
		rest := s[i+1:]
		switch s[i] {
		case '/':
			if hasAnyPrefix(rest, afterSlash) {
				return true
			}
		case '.':
			if hasAnyPrefix(rest, afterDot) {
				return true
			}
		case 'i':
			if strings.HasPrefix(rest, "d_") {
				return true
			}
		case 'e':
			if strings.HasPrefix(rest, "tc/") {
				return true
			}
		case 's':
			if strings.HasPrefix(rest, "ecret") {
				return true
			}
		case 'c':
			if strings.HasPrefix(rest, "redential") {
				return true
			}
		case 'p':
			if strings.HasPrefix(rest, "rivate") {
				return true
			}
		}
	}
	return false
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// matchPrivatePath reports whether s contains a private path
// (privatePathRE), trying the pattern only when mayBePrivatePath.
func matchPrivatePath(s string) bool {
	return mayBePrivatePath(s) && privatePathRE.MatchString(s)
}
