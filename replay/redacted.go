package replay

import (
	"bytes"
	"regexp"
	"slices"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/detect"
	"github.com/wardenhq/warden/policy"
)

// groups is a set of detector groups (package detect): PII, secrets.
type groups uint8

const (
	groupPII groups = 1 << iota
	groupSecrets
)

// NoteRedacted is the note on a changed record whose input the trace
// stored redacted, when a policy whose result changed reads a detector
// the redaction covered: live, that detector saw the text the replay sees
// only as [REDACTED:<kind>:<tag>].
const NoteRedacted = "redacted input: result may differ from live"

var (
	piiCall     = regexp.MustCompile(`\bpii\s*\(`)
	secretsCall = regexp.MustCompile(`\bsecrets\s*\(`)
	// traceMark is a replacement of the trace's redaction (package
	// redact): kind and HMAC tag. A policy's own redaction writes
	// [REDACTED:<kind>] without a tag; that is text the step carried.
	traceMark = regexp.MustCompile(`\[REDACTED:([a-z_]+):[0-9a-f]{8}\]`)
)

// detectorsOf returns the detector groups p reads: those its condition or
// reason calls (pii(...), secrets(...)). A modify policy may read any:
// its redact operations run detectors, and they are not visible outside
// package policy.
func detectorsOf(p *policy.Policy) groups {
	if p.Decision == warden.Modify {
		return groupPII | groupSecrets
	}
	var g groups
	for _, src := range []string{p.When, p.ReasonExpr} {
		if piiCall.MatchString(src) {
			g |= groupPII
		}
		if secretsCall.MatchString(src) {
			g |= groupSecrets
		}
	}
	return g
}

// redactedGroups returns the detector groups whose matches the trace
// redacted in rec's input or views.
func redactedGroups(rec *audit.Record) groups {
	var g groups
	for _, b := range [][]byte{rec.Input, rec.Views} {
		if !bytes.Contains(b, []byte("[REDACTED:")) {
			continue
		}
		for _, m := range traceMark.FindAllSubmatch(b, -1) {
			g |= groupOf(string(m[1]))
		}
	}
	return g
}

func groupOf(kind string) groups {
	switch {
	case slices.Contains(detect.PIIKinds, kind):
		return groupPII
	case slices.Contains(detect.SecretKinds, kind):
		return groupSecrets
	}
	return 0
}
