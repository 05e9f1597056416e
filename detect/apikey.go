package detect

import (
	"math"
	"strings"
)

// scanAPIKey finds API keys of well-known formats — OpenAI-style "sk-…"
// (incl. sk-proj-), Stripe sk_live_/rk_live_/sk_test_/rk_test_, Slack
// xox[baprs]-, Google "AIza…" — and generic assignments such as api_key=…,
// "apiKey": "…", X-Api-Key: …, secret=…, token=…, Authorization: Bearer …
// whose value is 16+ characters of high entropy. For assignments only the
// value is matched.
func scanAPIKey(s string, k *sink) {
	if !scanPrefixed(s, "sk-", k) || !scanPrefixed(s, "xox", k) || !scanPrefixed(s, "AIza", k) {
		return
	}
	if !scanStripe(s, k) {
		return
	}
	if !scanAssign(s, '=', k) {
		return
	}
	scanAssign(s, ':', k)
}

// scanPrefixed handles the fixed-prefix formats; false means stop.
func scanPrefixed(s, prefix string, k *sink) bool {
	// Search for the prefix's rarest byte, not its first one ('s' is common).
	rare := strings.IndexAny(prefix, "-zJ")
	if rare < 0 {
		rare = 0
	}
	from := rare
	for from < len(s) {
		e := strings.IndexByte(s[from:], prefix[rare])
		if e < 0 {
			return true
		}
		i := from + e - rare
		from = from + e + 1
		if !strings.HasPrefix(s[i:], prefix) {
			continue
		}
		from = i + len(prefix)
		if i > 0 && (isWord(s[i-1]) || s[i-1] == '-') {
			continue
		}
		v := from
		end := -1
		switch prefix {
		case "sk-": // sk-…, sk-proj-…, sk-ant-api03-…
			j := b64run(s, v)
			if j-v >= 20 && mixedAlnum(s[v:j]) {
				end = j
			}
		case "xox": // Slack xoxb-, xoxp-, xoxa-, xoxr-, xoxs-
			if v+1 < len(s) && strings.IndexByte("baprs", s[v]) >= 0 && s[v+1] == '-' {
				j := v + 2
				for j < len(s) && (isAlnum(s[j]) || s[j] == '-') {
					j++
				}
				if j-v-2 >= 10 && mixedAlnum(s[v+2:j]) {
					end = j
				}
			}
		case "AIza": // Google API key: 39 characters in all
			j := b64run(s, v)
			if j-i == 39 {
				end = j
			}
		}
		if end < 0 || (end < len(s) && isWord(s[end])) {
			continue
		}
		if !k.add(i, end) {
			return false
		}
		from = end
	}
	return true
}

// scanStripe finds Stripe secret and restricted keys; false means stop.
func scanStripe(s string, k *sink) bool {
	from := 2
	for from < len(s) {
		u := strings.IndexByte(s[from:], '_')
		if u < 0 {
			return true
		}
		u += from
		from = u + 1
		i := u - 2
		if (s[i] != 's' && s[i] != 'r') || s[i+1] != 'k' || (i > 0 && isWord(s[i-1])) {
			continue
		}
		if !strings.HasPrefix(s[u+1:], "live_") && !strings.HasPrefix(s[u+1:], "test_") {
			continue
		}
		v := u + 6
		j := v
		for j < len(s) && isAlnum(s[j]) {
			j++
		}
		if j-v < 16 || (j < len(s) && isWord(s[j])) {
			continue
		}
		if !k.add(i, j) {
			return false
		}
		from = j
	}
	return true
}

// secretKeyNames are the assignment keys (compared case-insensitively, '-'
// and '_' alike, as a suffix of the key) whose values are secrets.
var secretKeyNames = [...]string{"api_key", "apikey", "secret", "secret_key", "secretkey", "access_key", "accesskey", "token", "authorization",
	"password", "passwd", "passphrase", "private_key", "privatekey"}

// notSecretKeyNames are keys that end like a secret's but name a pagination
// cursor (compared as secretKeyNames are): an opaque, random-looking value
// that grants nothing.
var notSecretKeyNames = [...]string{"page_token", "pagetoken", "next_token", "nexttoken", "continuation_token", "continuationtoken", "sync_token", "synctoken"}

// scanAssign finds key<sep>value assignments with secret-looking keys and
// high-entropy values; false means stop.
func scanAssign(s string, sep byte, k *sink) bool {
	from := 0
	for from < len(s) {
		e := strings.IndexByte(s[from:], sep)
		if e < 0 {
			return true
		}
		i := from + e
		from = i + 1
		// The key, possibly quoted, before the separator.
		j := i
		for j > 0 && i-j < 3 && s[j-1] == ' ' {
			j--
		}
		if j > 0 && (s[j-1] == '"' || s[j-1] == '\'') {
			j--
		}
		ke := j
		for j > 0 && ke-j < 64 && (isWord(s[j-1]) || s[j-1] == '-') {
			j--
		}
		if !secretKey(s[j:ke]) {
			continue
		}
		// The value after it.
		v := i + 1
		if v < len(s) && (s[v] == sep || (sep == '=' && s[v] == '>')) {
			if s[v] == sep {
				continue // "==" or "::"
			}
			v++
		}
		v, end, ok := secretValue(s, v)
		if !ok {
			continue
		}
		if !k.add(v, end) {
			return false
		}
		from = end
	}
	return true
}

// secretValue finds the value of an assignment whose key names a secret,
// starting at s[v] (just after the separator): up to three blanks, an
// opening quote, a Bearer/Token/Basic scheme, then a run of value bytes
// (at most 512, '=' only as base64 padding, trailing dots dropped). ok
// when that run is 16+ bytes of high entropy (highEntropy).
func secretValue(s string, v int) (start, end int, ok bool) {
	for n := 0; v < len(s) && n < 3 && (s[v] == ' ' || s[v] == '\t'); n++ {
		v++
	}
	if v < len(s) && (s[v] == '"' || s[v] == '\'') {
		v++
	}
	for _, scheme := range [...]string{"bearer ", "token ", "basic "} {
		if hasPrefixFold(s, v, scheme) {
			v += len(scheme)
			break
		}
	}
	end = v
	for end < len(s) && end-v < 512 && ctab[s[end]]&cValue != 0 && s[end] != '=' {
		end++
	}
	for n := 0; n < 3 && end < len(s) && s[end] == '='; n++ {
		end++ // base64 padding
	}
	for end > v && s[end-1] == '.' {
		end--
	}
	return v, end, end-v >= 16 && highEntropy(s[v:end])
}

// secretKey reports whether an assignment key names a secret.
func secretKey(key string) bool {
	for _, name := range secretKeyNames {
		if keySuffix(key, name) {
			for _, not := range notSecretKeyNames {
				if keySuffix(key, not) {
					return false
				}
			}
			return true
		}
	}
	return false
}

// keySuffix reports whether key ends in name (lower case, '_' for '-'),
// ignoring case and with '-' and '_' alike.
func keySuffix(key, name string) bool {
	if len(key) < len(name) {
		return false
	}
	t := key[len(key)-len(name):]
	for x := 0; x < len(name); x++ {
		c := t[x]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		if c == '-' {
			c = '_'
		}
		if c != name[x] {
			return false
		}
	}
	return true
}

// mixedAlnum reports whether v has both a letter and a digit.
func mixedAlnum(v string) bool {
	var cls uint8
	for i := 0; i < len(v); i++ {
		cls |= ctab[v[i]]
	}
	return cls&cDigit != 0 && cls&(cUpper|cLower) != 0
}

// highEntropy reports whether v looks like a random credential: letters and
// digits mixed, and Shannon entropy of at least 3 bits per byte.
func highEntropy(v string) bool {
	if !mixedAlnum(v) {
		return false
	}
	return Entropy(v) >= 3.0
}

// Entropy returns the Shannon entropy of s in bits per byte.
func Entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]uint32
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	n := float64(len(s))
	h := 0.0
	for _, c := range counts {
		if c != 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
