// Package detect finds PII, secrets and prompt-injection in text. It backs the
// policy functions pii(), secrets() and injection() and the redact modifier.
//
// Every detector is a hand-written scanner guarded by a cheap prefilter (an
// '@' for email, "-----BEGIN" for PEM keys, a digit run for numbers, ...), so
// the functions run in a few microseconds on kilobytes of ordinary text and do
// not allocate when nothing is found. No function panics, whatever the input
// (invalid UTF-8 included); Match offsets are byte offsets into the input.
package detect

import "fmt"

// Match is one finding: Kind over s[Start:End].
type Match struct {
	Kind       string
	Start, End int
}

// PIIKinds and SecretKinds list the detector kinds of each group.
var (
	PIIKinds    = []string{"email", "phone", "credit_card", "iban", "ssn", "ip_address"}
	SecretKinds = []string{"private_key", "aws_access_key", "github_token", "jwt", "api_key"}
)

// kindID identifies a detector. The order is the tie-break priority when two
// overlapping candidates have the same length: the lower id wins.
type kindID uint8

const (
	kPrivateKey kindID = iota
	kJWT
	kGitHub
	kAWS
	kAPIKey
	kCard
	kIBAN
	kSSN
	kEmail
	kIP
	kPhone
	numKinds
)

var kindNames = [numKinds]string{
	kPrivateKey: "private_key",
	kJWT:        "jwt",
	kGitHub:     "github_token",
	kAWS:        "aws_access_key",
	kAPIKey:     "api_key",
	kCard:       "credit_card",
	kIBAN:       "iban",
	kSSN:        "ssn",
	kEmail:      "email",
	kIP:         "ip_address",
	kPhone:      "phone",
}

// The groups in alphabetical order of kind name, so PII and Secrets return
// sorted lists without sorting.
var (
	piiSorted    = [...]kindID{kCard, kEmail, kIBAN, kIP, kPhone, kSSN}
	secretSorted = [...]kindID{kAPIKey, kAWS, kGitHub, kJWT, kPrivateKey}
)

const (
	piiMask    = 1<<kCard | 1<<kEmail | 1<<kIBAN | 1<<kIP | 1<<kPhone | 1<<kSSN
	secretMask = 1<<kAPIKey | 1<<kAWS | 1<<kGitHub | 1<<kJWT | 1<<kPrivateKey
)

// kindMask maps a kind or group name to its detector bit set (0 if unknown).
func kindMask(name string) uint32 {
	switch name {
	case "pii":
		return piiMask
	case "secrets":
		return secretMask
	}
	for id, n := range kindNames {
		if n == name {
			return 1 << id
		}
	}
	return 0
}

// IsKind reports whether name is a detector kind or one of the groups "pii"
// and "secrets".
func IsKind(name string) bool { return kindMask(name) != 0 }

// sink receives the candidates of one scanner. With first set it records
// only that something was found and asks the scanner to stop.
type sink struct {
	kind  string
	first bool
	found bool
	out   []Match
}

// add records s[start:end]; it returns false when the scanner should stop.
func (k *sink) add(start, end int) bool {
	k.found = true
	if k.first {
		return false
	}
	k.out = append(k.out, Match{Kind: k.kind, Start: start, End: end})
	return true
}

// run dispatches to the scanner of id. A switch (not a table of funcs) keeps
// the sink on the caller's stack.
func run(id kindID, s string, k *sink) {
	k.kind = kindNames[id]
	switch id {
	case kPrivateKey:
		scanPrivateKey(s, k)
	case kJWT:
		scanJWT(s, k)
	case kGitHub:
		scanGitHub(s, k)
	case kAWS:
		scanAWS(s, k)
	case kAPIKey:
		scanAPIKey(s, k)
	case kCard:
		scanCard(s, k)
	case kIBAN:
		scanIBAN(s, k)
	case kSSN:
		scanSSN(s, k)
	case kEmail:
		scanEmail(s, k)
	case kIP:
		scanIP(s, k)
	case kPhone:
		scanPhone(s, k)
	}
}

// present returns the names of the kinds in ids that occur in s.
func present(s string, ids []kindID) []string {
	var out []string
	for _, id := range ids {
		k := sink{first: true}
		run(id, s, &k)
		if k.found {
			out = append(out, kindNames[id])
		}
	}
	return out
}

// PII returns the sorted, distinct PII kinds found in s (nil when none).
func PII(s string) []string { return present(s, piiSorted[:]) }

// Secrets returns the sorted, distinct secret kinds found in s (nil when none).
func Secrets(s string) []string { return present(s, secretSorted[:]) }

// ExpandKinds resolves kind names and the groups "pii" and "secrets" to
// kinds, deduplicated in first-seen order; an unknown name is an error that
// names it.
func ExpandKinds(names []string) ([]string, error) {
	var seen uint32
	out := make([]string, 0, len(names))
	add := func(id kindID) {
		if seen&(1<<id) == 0 {
			seen |= 1 << id
			out = append(out, kindNames[id])
		}
	}
	for _, name := range names {
		switch name {
		case "pii":
			for _, k := range PIIKinds {
				add(kindID(trailingBit(kindMask(k))))
			}
		case "secrets":
			for _, k := range SecretKinds {
				add(kindID(trailingBit(kindMask(k))))
			}
		default:
			m := kindMask(name)
			if m == 0 {
				return nil, fmt.Errorf("detect: unknown detector kind %q (want one of pii, secrets, %v, %v)", name, PIIKinds, SecretKinds)
			}
			add(kindID(trailingBit(m)))
		}
	}
	return out, nil
}

func trailingBit(m uint32) int {
	for i := 0; i < 32; i++ {
		if m&(1<<i) != 0 {
			return i
		}
	}
	return 0
}

// Find returns the non-overlapping matches of the given kinds in s, in order
// of Start. Kinds may include the groups "pii" and "secrets"; unknown names
// are ignored (use ExpandKinds to validate them). Where candidates of
// different kinds overlap, the longest wins, then the earliest, then the more
// specific kind (secrets before PII).
func Find(s string, kinds []string) []Match {
	var mask uint32
	for _, name := range kinds {
		mask |= kindMask(name)
	}
	if mask == 0 || s == "" {
		return nil
	}
	k := sink{}
	for id := kindID(0); id < numKinds; id++ {
		if mask&(1<<id) != 0 {
			run(id, s, &k)
		}
	}
	return resolve(k.out)
}
