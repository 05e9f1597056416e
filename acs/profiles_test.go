package acs

import (
	"slices"
	"testing"

	"github.com/wardenhq/warden/sigkey"
)

// allProfiles is every profile ACS v0.1.0 names (conformance.md), in its
// order.
var allProfiles = []string{"acs-core", "acs-trace", "acs-inspect", "acs-inspect-dynamic", "acs-provenance", "acs-crypto", "acs-audit"}

// TestProfilesAccepted: a client declaring every profile is accepted
// exactly those the Guardian's configuration backs — the ones the tests
// named in docs/acs-conformance.md show — and a client declaring a subset
// is never accepted more than it declared.
func TestProfilesAccepted(t *testing.T) {
	key, err := sigkey.Generate(sigkey.MLDSA65, nil)
	if err != nil {
		t.Fatal(err)
	}
	base := []string{"acs-core", "acs-provenance", "acs-audit"}
	cases := []struct {
		name     string
		mod      func(*Options)
		declared []string
		want     []string
	}{
		{"nothing optional configured", nil, allProfiles, base},
		{"otel exporter", func(o *Options) { o.TraceOTel = true }, allProfiles,
			[]string{"acs-core", "acs-trace", "acs-provenance", "acs-audit"}},
		{"ocsf sink", func(o *Options) { o.TraceOCSF = true }, allProfiles,
			[]string{"acs-core", "acs-trace", "acs-provenance", "acs-audit"}},
		{"agbom store", func(o *Options) { o.Inspect = true }, allProfiles,
			[]string{"acs-core", "acs-inspect", "acs-inspect-dynamic", "acs-provenance", "acs-audit"}},
		{"ml-dsa signing key", func(o *Options) { o.SigningKey = key }, allProfiles,
			[]string{"acs-core", "acs-provenance", "acs-crypto", "acs-audit"}},
		{"everything", func(o *Options) { o.TraceOTel, o.Inspect, o.SigningKey = true, true, key }, allProfiles, allProfiles},
		{"everything, client declares core only", func(o *Options) { o.TraceOTel, o.Inspect, o.SigningKey = true, true, key },
			[]string{"acs-core"}, []string{"acs-core"}},
		{"unknown profile ignored", nil, []string{"acs-core", "acs-gold"}, []string{"acs-core"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.mod)
			s := f.session()
			p := helloPayload(allHooks...)
			p["profiles_supported"] = toAny(c.declared)
			if slices.Contains(c.declared, ProfileProvenance) {
				p["provenance_producer"] = "deterministic"
			}
			r := result(t, s.call(MethodHello, p))
			got := strings_(r["profiles_accepted"])
			if !slices.Equal(got, c.want) {
				t.Fatalf("profiles_accepted = %v, want %v", got, c.want)
			}
		})
	}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
