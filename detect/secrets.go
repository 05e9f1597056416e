package detect

import (
	"encoding/json"
	"strings"
)

// scanPrivateKey finds PEM private keys: "-----BEGIN <label>-----" with a
// label containing "PRIVATE KEY" (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP ...)
// through the matching END line, or through the end of the base64 body when
// the END line is missing (a truncated key is still a secret).
func scanPrivateKey(s string, k *sink) {
	const begin = "-----BEGIN "
	from := 0
	for from < len(s) {
		b := strings.Index(s[from:], begin)
		if b < 0 {
			return
		}
		b += from
		ls := b + len(begin)
		e := strings.Index(s[ls:], "-----")
		if e < 0 {
			return
		}
		label := s[ls : ls+e]
		from = ls + e + 5
		if len(label) > 48 || !strings.Contains(label, "PRIVATE KEY") || strings.ContainsAny(label, "\r\n") {
			continue
		}
		end := -1
		for x := from; x < len(s); {
			j := strings.Index(s[x:], "-----END ")
			if j < 0 {
				break
			}
			j += x + len("-----END ")
			if strings.HasPrefix(s[j:], label) && strings.HasPrefix(s[j+len(label):], "-----") {
				end = j + len(label) + 5
				break
			}
			x = j
		}
		if end < 0 {
			end = from
			for end < len(s) {
				c := s[end]
				if ctab[c]&cValue == 0 && c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != ':' && c != ',' {
					break
				}
				end++
			}
			for end > from && strings.IndexByte(" \t\r\n", s[end-1]) >= 0 {
				end--
			}
		}
		if !k.add(b, end) {
			return
		}
		from = end
	}
}

// awsPrefixes are the four-letter prefixes of AWS access key ids.
var awsPrefixes = [...]string{"AKIA", "ASIA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "ABIA", "ACCA", "APKA"}

// scanAWS finds AWS access key ids: a known prefix and 16 upper-case
// letters or digits (20 in all), standing alone.
func scanAWS(s string, k *sink) {
	from := 0
	for from+20 <= len(s) {
		a := strings.IndexByte(s[from:], 'A')
		if a < 0 {
			return
		}
		i := from + a
		from = i + 1
		if i+20 > len(s) || (i > 0 && isAlnum(s[i-1])) {
			continue
		}
		ok := s[i+1] == '3' && s[i+2] == 'T' && isAlnum(s[i+3]) // A3T…
		for _, p := range awsPrefixes {
			if ok || s[i:i+4] == p {
				ok = true
				break
			}
		}
		if !ok {
			continue
		}
		j := i + 4
		for j < i+20 && (isUpper(s[j]) || isDigit(s[j])) {
			j++
		}
		if j != i+20 || (j < len(s) && isAlnum(s[j])) {
			continue
		}
		if !k.add(i, j) {
			return
		}
		from = j
	}
}

// scanGitHub finds GitHub tokens: ghp_/gho_/ghu_/ghs_/ghr_ followed by 36 or
// more alphanumerics, and fine-grained github_pat_ tokens. The prefilter is
// the '_' byte.
func scanGitHub(s string, k *sink) {
	from := 3
	for from < len(s) {
		u := strings.IndexByte(s[from:], '_')
		if u < 0 {
			return
		}
		u += from
		from = u + 1
		start, min, fine := -1, 36, false
		if s[u-3] == 'g' && s[u-2] == 'h' && strings.IndexByte("pousr", s[u-1]) >= 0 {
			start = u - 3
		} else if u >= 10 && s[u-10:u+1] == "github_pat_" {
			start, min, fine = u-10, 22, true
		}
		if start < 0 || (start > 0 && isWord(s[start-1])) {
			continue
		}
		j := u + 1
		for j < len(s) && j-u <= 255 && (isAlnum(s[j]) || (fine && s[j] == '_')) {
			j++
		}
		if j-u-1 < min || (j < len(s) && isWord(s[j])) {
			continue
		}
		if !k.add(start, j) {
			return
		}
		from = j
	}
}

// scanJWT finds JSON Web Tokens: three base64url segments separated by dots
// whose first segment decodes to a JSON object with an "alg" member.
func scanJWT(s string, k *sink) {
	from := 2
	for from < len(s) {
		e := strings.IndexByte(s[from:], 'J') // rarer than 'e'
		if e < 0 {
			return
		}
		i := from + e - 2
		from += e + 1
		if s[i] != 'e' || s[i+1] != 'y' {
			continue
		}
		if i > 0 && (ctab[s[i-1]]&cB64URL != 0 || s[i-1] == '.') {
			continue
		}
		h := b64run(s, i)
		if h >= len(s) || s[h] != '.' {
			from = h
			continue
		}
		p := b64run(s, h+1)
		if p-h-1 < 2 || p >= len(s) || s[p] != '.' {
			continue
		}
		end := b64run(s, p+1)
		if end < len(s) && (s[end] == '.' && end+1 < len(s) && ctab[s[end+1]]&cB64URL != 0) {
			continue
		}
		from = end
		if !jwtHeader(s[i:h]) {
			continue
		}
		if !k.add(i, end) {
			return
		}
	}
}

func b64run(s string, i int) int {
	for i < len(s) && ctab[s[i]]&cB64URL != 0 {
		i++
	}
	return i
}

// jwtHeader decodes a base64url JWT header and checks it is a JSON object
// with an "alg" member.
func jwtHeader(seg string) bool {
	var buf [768]byte
	if len(seg)*3/4 > len(buf) {
		return false
	}
	n, ok := b64urlDecode(buf[:], seg)
	if !ok {
		return false
	}
	var h struct {
		Alg *string `json:"alg"`
	}
	if json.Unmarshal(buf[:n], &h) != nil {
		return false
	}
	return h.Alg != nil
}

// b64urlDecode decodes unpadded base64url src into dst.
func b64urlDecode(dst []byte, src string) (int, bool) {
	var acc uint32
	bits, n := 0, 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		var v byte
		switch {
		case isUpper(c):
			v = c - 'A'
		case c >= 'a' && c <= 'z':
			v = c - 'a' + 26
		case isDigit(c):
			v = c - '0' + 52
		case c == '-':
			v = 62
		case c == '_':
			v = 63
		default:
			return 0, false
		}
		acc = acc<<6 | uint32(v)
		bits += 6
		if bits >= 8 {
			bits -= 8
			if n >= len(dst) {
				return 0, false
			}
			dst[n] = byte(acc >> bits)
			n++
		}
	}
	return n, bits < 6
}
