package redact

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/detect"
)

var tagRE = regexp.MustCompile(`\[REDACTED:([a-z_]+):([0-9a-f]{8})\]`)

// checkJSON redacts in with r and checks the result: in unchanged, valid
// JSON, tags of exactly kinds in order, every keep substring still there.
func checkJSON(t *testing.T, r *Redactor, in []byte, kinds, keep []string) []byte {
	t.Helper()
	orig := string(in)
	got := r.JSON(in)
	if string(in) != orig {
		t.Fatalf("input modified: %s", in)
	}
	if !json.Valid(got) {
		t.Fatalf("invalid JSON: %s", got)
	}
	var found []string
	for _, m := range tagRE.FindAllStringSubmatch(string(got), -1) {
		found = append(found, m[1])
	}
	if strings.Join(found, ",") != strings.Join(kinds, ",") {
		t.Errorf("kinds %v, want %v in %s", found, kinds, got)
	}
	for _, k := range keep {
		if !strings.Contains(string(got), k) {
			t.Errorf("%q lost: %s", k, got)
		}
	}
	return got
}

func TestJSON(t *testing.T) {
	r := New([]byte("0123456789abcdef0123456789abcdef"))
	cases := []struct {
		name, in string
		kinds    []string // the kinds of the tags, in order
		keep     []string // substrings that must stay
	}{
		{"aws", `{"body":"aws_access_key_id=AKIAIOSFODNN7EXAMPLE","n":1}`, []string{"aws_access_key"}, []string{`"n":1`, `aws_access_key_id=`}},
		{"escaped", `{"body":"key \"AKIAIOSFODNN7EXAMPLE\"\n\u0041KIAIOSFODNN7EXAMPLF"}`, []string{"aws_access_key", "aws_access_key"}, nil},
		{"card", `{"text":"Your card 4111 1111 1111 1111 is on file."}`, []string{"credit_card"}, []string{"Your card ", " is on file."}},
		{"key", `{"alice@example.com":true}`, []string{"email"}, []string{":true}"}},
		{"number", `{"card":4111111111111111,"x":12.5e3,"y":-3}`, []string{"credit_card"}, []string{`"x":12.5e3`, `"y":-3`}},
		{"none", `{"text":"What is on my calendar today?","n":[1,2,3],"b":null}`, nil, nil},
		{"nested", `[["a@b.example","AKIAIOSFODNN7EXAMPLE"],{"x":{"y":"ghp_0123456789abcdefghijklmnopqrstuvwxyz"}}]`, []string{"email", "aws_access_key", "github_token"}, nil},
		{"fake tag", `{"t":"[REDACTED:x:AKIAIOSFODNN7EXAMPLE]"}`, []string{"aws_access_key"}, []string{"[REDACTED:x:"}},
		{"exposed", `{"t":"A00::0000 00000!0000"}`, []string{"ip_address", "phone"}, nil},
		{"utf8", `{"t":"héllo ☃ AKIAIOSFODNN7EXAMPLE \u2028"}`, []string{"aws_access_key"}, []string{"héllo ☃"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := []byte(c.in)
			got := checkJSON(t, r, in, c.kinds, c.keep)
			for _, secret := range []string{"AKIAIOSFODNN7EXAMPLE", "4111", "alice@", "ghp_"} {
				if strings.Contains(string(got), secret) {
					t.Errorf("%s left in %s", secret, got)
				}
			}
			if c.kinds == nil && &got[0] != &in[0] {
				t.Errorf("unchanged input copied")
			}
		})
	}
}

// Two attempts of the same secret get the same tag, different secrets or
// keys different ones.
func TestTags(t *testing.T) {
	k1, k2 := make([]byte, KeySize), make([]byte, KeySize)
	k2[0] = 1
	r1, r2 := New(k1), New(k2)
	tag := func(r *Redactor, s string) string {
		m := tagRE.FindStringSubmatch(r.String(s))
		if m == nil {
			t.Fatalf("no tag in %q", r.String(s))
		}
		return m[2]
	}
	a := tag(r1, "id AKIAIOSFODNN7EXAMPLE")
	if b := tag(r1, `{"x":"AKIAIOSFODNN7EXAMPLE"}`); a != b {
		t.Errorf("same secret: %s, %s", a, b)
	}
	if b := tag(r1, "AKIAIOSFODNN7EXAMPLF"); a == b {
		t.Errorf("different secrets share tag %s", a)
	}
	if b := tag(r2, "AKIAIOSFODNN7EXAMPLE"); a == b {
		t.Errorf("different keys share tag %s", a)
	}
}

func TestJSONMalformed(t *testing.T) {
	r := New(make([]byte, KeySize))
	for _, in := range []string{`"`, `"abc`, `{"a":"\`, `-`, `{"a":"x\u12"}`, "\"\xff AKIAIOSFODNN7EXAMPLE\""} {
		r.JSON([]byte(in)) // must not panic
	}
	if got := string(r.JSON([]byte("\"\xff AKIAIOSFODNN7EXAMPLE\""))); !json.Valid([]byte(got)) || strings.Contains(got, "AKIA") {
		t.Errorf("invalid UTF-8: %q", got)
	}
}

func FuzzJSON(f *testing.F) {
	f.Add([]byte(`{"body":"aws_access_key_id=AKIAIOSFODNN7EXAMPLE","card":4111111111111111}`))
	f.Add([]byte(`["a@b.example\n", 1e5, "\ud800"]`))
	f.Add([]byte(`{"api_key":"Zx8fQ2mP9wLk3Rt7Vb1N","in":[{"value":"p4Ss-W0rd-Xy7Zq9Lk2M","name":"pass\u0077ord"}]}`))
	r := New(make([]byte, KeySize))
	f.Fuzz(func(t *testing.T, b []byte) {
		in := string(b)
		got := r.JSON(b)
		if string(b) != in {
			t.Fatal("input modified")
		}
		if json.Valid(b) && !json.Valid(got) {
			t.Fatalf("valid %q became invalid %q", b, got)
		}
	})
}

// Filter redacts every text of a record without touching the outcome's
// results it shares.
func TestFilter(t *testing.T) {
	r := New(make([]byte, KeySize))
	results := []warden.Result{{Guardian: "policy", Reason: "ok"}, {Guardian: "hook", Reason: "saw AKIAIOSFODNN7EXAMPLE", Error: "mail a@b.example", Patch: json.RawMessage(`{"x":"4111111111111111"}`)}}
	rec := &audit.Record{Reason: "AKIAIOSFODNN7EXAMPLE", Results: results,
		Input: json.RawMessage(`{"a":"AKIAIOSFODNN7EXAMPLE"}`), Output: json.RawMessage(`{"a":"a@b.example"}`), Views: json.RawMessage(`{"tool":{"args":{"k":"AKIAIOSFODNN7EXAMPLE"}}}`)}
	r.Filter(rec)
	b, _ := json.Marshal(rec)
	for _, s := range []string{"AKIA", "a@b", "4111"} {
		if strings.Contains(string(b), s) {
			t.Errorf("%s left: %s", s, b)
		}
	}
	if results[1].Reason != "saw AKIAIOSFODNN7EXAMPLE" || string(results[1].Patch) != `{"x":"4111111111111111"}` {
		t.Errorf("the outcome's results were changed: %+v", results[1])
	}
	if rec.Results[0].Reason != "ok" {
		t.Errorf("%+v", rec.Results[0])
	}
}

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	k1, err := LoadKey(dir)
	if err != nil || len(k1) != KeySize {
		t.Fatal(k1, err)
	}
	path := filepath.Join(dir, KeyFileName)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%v %v", fi.Mode(), err)
	}
	k2, err := LoadKey(dir)
	if err != nil || string(k1) != string(k2) {
		t.Fatalf("key not reused: %v", err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(dir); err == nil || !strings.Contains(err.Error(), "chmod 600 "+path) {
		t.Fatalf("open key accepted: %v", err)
	}
	os.Chmod(path, 0o600)
	os.WriteFile(path, []byte("short"), 0o600)
	if _, err := LoadKey(dir); err == nil || !strings.Contains(err.Error(), "not 32 bytes") {
		t.Fatalf("short key accepted: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
}

// positives hold a match of every kind, alone and at a string's edges.
var positives = []string{
	"AKIAIOSFODNN7EXAMPLE", "4111 1111 1111 1111", "4111111111111111", "alice@example.com", "a@b.co",
	"+1 (555) 123-4567", "123-45-6789", "10.0.0.1", "::1", "fe80::1", "2001:db8::ff00:42:8329",
	"GB82WEST12345698765432", "DE89 3704 0044 0532 0130 00", "ghp_0123456789abcdefghijklmnopqrstuvwxyz",
	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
	"sk_live_0123456789abcdefghijklmn", "api_key=0123456789abcdef0123", "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n-----END RSA PRIVATE KEY-----",
}

// neighbours are texts put next to a match, across sep.
var neighbours = []string{"", "1", "12", "1234", " 1", "1 ", "-", ".", ":", "@", "a", "ab1", "=", "x=", "(", ")", "+", "f", "ff:", "\n", " ", "4111", "-----END", "_"}

// TestSeparator: a match in one text stays a match, overlapping that text,
// when other texts are joined to it with sep (what mayMatch and JSON rely
// on).
func TestSeparator(t *testing.T) {
	for _, p := range positives {
		if len(detect.Find(p, kinds)) == 0 {
			t.Errorf("%q is not a match (fix the sample)", p)
			continue
		}
		for _, a := range neighbours {
			for _, b := range neighbours {
				if j := a + sep + p + sep + b; !overlaps(detect.Find(j, kinds), len(a)+1, len(a)+1+len(p)) {
					t.Errorf("no match in %q", j)
				}
			}
		}
	}
}

func FuzzSeparator(f *testing.F) {
	for _, p := range positives {
		f.Add(p, "1 ", "-2")
	}
	f.Fuzz(func(t *testing.T, p, a, b string) {
		if len(detect.Find(p, kinds)) == 0 {
			return
		}
		if j := a + sep + p + sep + b; !overlaps(detect.Find(j, kinds), len(a)+1, len(a)+1+len(p)) {
			t.Errorf("match %q lost in %q", p, j)
		}
	})
}

// FuzzNoMatchLeft: what String leaves holds no detector match outside its
// replacements.
func FuzzNoMatchLeft(f *testing.F) {
	for _, p := range positives {
		f.Add("x " + p + " y")
	}
	r := New(make([]byte, KeySize))
	f.Fuzz(func(t *testing.T, s string) {
		out := r.String(s)
		rest := tagRE.ReplaceAllString(out, "\x00")
		if ms := detect.Find(rest, kinds); len(ms) > 0 {
			t.Errorf("%q -> %q still matches %v", s, out, ms)
		}
	})
}

func overlaps(ms []detect.Match, start, end int) bool {
	for _, m := range ms {
		if m.Start < end && m.End > start {
			return true
		}
	}
	return false
}
