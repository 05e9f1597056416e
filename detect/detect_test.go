package detect

import (
	"encoding/base64"
	"reflect"
	"slices"
	"strings"
	"testing"
)

type kindCase struct {
	in   string
	want string // the matched text; "" means no match
}

var (
	jwtValid   = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	jwtNoAlg   = b64(`{"typ":"JWT"}`) + ".eyJzdWIiOiIxIn0.c2lnbmF0dXJl"
	jwtNotJSON = b64(`{"alg" HS256`) + ".eyJzdWIiOiIxIn0.c2lnbmF0dXJl"
	ghp        = "ghp_" + strings.Repeat("aB3dE6gH9k", 3) + "LmN0pQ"
	pem        = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq3\nx9Yk2Q==\n-----END RSA PRIVATE KEY-----"
)

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

var kindCases = map[string][]kindCase{
	"email": {
		{"mail jane.doe+tag@example.co.uk now", "jane.doe+tag@example.co.uk"},
		{"<bob@sub.example.org>.", "bob@sub.example.org"},
		{"user@localhost", ""},
		{"user@example.c", ""},
		{"@handle on twitter", ""},
		{"icon@2x.png", ""},
		{"a..b@example.com", ""},
		{"user@123.45.67.89", ""},
	},
	"phone": {
		{"call +1 (555) 234-5678 today", "+1 (555) 234-5678"},
		{"+44 20 7946 0958", "+44 20 7946 0958"},
		{"tel:+4915123456789", "+4915123456789"},
		{"+33 6 12 34 56 78", "+33 6 12 34 56 78"},
		{"(555) 234-5678", "(555) 234-5678"},
		{"555-234-5678", "555-234-5678"},
		{"555.234.5678", "555.234.5678"},
		{"1-800-555-1234", "1-800-555-1234"},
		{"020 7946 0958", "020 7946 0958"},
		{"06 12 34 56 78", "06 12 34 56 78"},
		{"account 5551234567890", ""},
		{"5552345678", ""},
		{"on 2024-01-15 at 10:30", ""},
		{"2024-01-15T10:30:00Z", ""},
		{"01.02.2024", ""},
		{"id 123e4567-e89b-12d3-a456-426614174000", ""},
		{"v2.10.3", ""},
		{"192.168.100.200", ""},
		{"between 100-2000 units", ""},
		{"+12", ""},
		{"555-123-4567", ""}, // exchange cannot start with 1
		{"order #555-234-5678x", ""},
	},
	"credit_card": {
		{"card 4111 1111 1111 1111 exp 12/27", "4111 1111 1111 1111"},
		{"4111-1111-1111-1111", "4111-1111-1111-1111"},
		{"5555555555554444", "5555555555554444"},
		{"amex 3782 822463 10005.", "3782 822463 10005"},
		{"6011111111111117", "6011111111111117"},
		{"4111 1111 1111 1112", ""},     // Luhn
		{"1234567812345670", ""},        // Luhn ok, no IIN
		{"41111111111111111111111", ""}, // too long
		{"ref 4111111111111111a", ""},   // glued to a word
		{"0.4111111111111111", ""},      // decimal
		{"4111 1111 1111 11", ""},       // too short
		{"order 12 4111 1111 1111 1111", "4111 1111 1111 1111"},
	},
	"iban": {
		{"IBAN: DE89 3704 0044 0532 0130 00.", "DE89 3704 0044 0532 0130 00"},
		{"GB82WEST12345698765432", "GB82WEST12345698765432"},
		{"GB82 WEST 1234 5698 7654 32", "GB82 WEST 1234 5698 7654 32"},
		{"FR1420041010050500013M02606", "FR1420041010050500013M02606"},
		{"NL91ABNA0417164300", "NL91ABNA0417164300"},
		{"NO9386011117947", "NO9386011117947"},
		{"DE88 3704 0044 0532 0130 00", ""}, // check digits
		{"DE89 3704 0044 0532 0130 0", ""},  // length
		{"DE89370400440532013000123", ""},   // too long
		{"ZZ89370400440532013000", ""},      // no such country
		{"XDE89370400440532013000", ""},     // glued
		{"de89370400440532013000", ""},      // lower case
	},
	"ssn": {
		{"SSN 123-45-6789.", "123-45-6789"},
		{"078-05-1120", "078-05-1120"},
		{"000-12-3456", ""},
		{"666-12-3456", ""},
		{"912-34-5678", ""},
		{"123-00-4567", ""},
		{"123-45-0000", ""},
		{"1123-45-6789", ""},
		{"123-45-67890", ""},
		{"123456789", ""},
	},
	"ip_address": {
		{"host 192.168.1.10 is up", "192.168.1.10"},
		{"10.0.0.1:8080", "10.0.0.1"},
		{"server at 8.8.8.8.", "8.8.8.8"},
		{"addr 2001:db8::8a2e:370:7334 ok", "2001:db8::8a2e:370:7334"},
		{"[fe80::1]:443", "fe80::1"},
		{"::ffff:192.0.2.1", "::ffff:192.0.2.1"},
		{"1.2.3", ""},
		{"1.2.3.4.5", ""},
		{"999.1.1.1", ""},
		{"v2.10.3", ""},
		{"v1.2.3.4", ""},
		{"at 10:30:00", ""},
		{"mac 00:1a:2b:3c:4d:5e", ""},
		{"std::vector<int>", ""},
		{"192.168.001.1", ""},
	},
	"private_key": {
		{"key:\n" + pem + "\nend", pem},
		{"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"},
		{"-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBgkq\n", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBgkq"},
		{"-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----"},
		{"-----BEGIN PUBLIC KEY-----\nMIIBIjAN\n-----END PUBLIC KEY-----", ""},
		{"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", ""},
		{"the PRIVATE KEY header", ""},
	},
	"aws_access_key": {
		{"aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"},
		{"ASIAY34FZKBOKMUTVV7A,", "ASIAY34FZKBOKMUTVV7A"},
		{"AKIAIOSFODNN7EXAMPL", ""},   // short
		{"AKIAIOSFODNN7EXAMPLE1", ""}, // long
		{"AKIA", ""},
		{"XAKIAIOSFODNN7EXAMPLE", ""},
		{"AKIAiosfodnn7example", ""},
	},
	"github_token": {
		{"token " + ghp + " here", ghp},
		{"gho_" + ghp[4:], "gho_" + ghp[4:]},
		{"github_pat_11ABCDEFG0123456789abc_" + strings.Repeat("x1Y2z3", 10), "github_pat_11ABCDEFG0123456789abc_" + strings.Repeat("x1Y2z3", 10)},
		{"ghp_short123", ""},
		{"ghx_" + ghp[4:], ""},
		{"xghp_" + ghp[4:], ""},
	},
	"jwt": {
		{"Authorization: Bearer " + jwtValid, jwtValid},
		{jwtNoAlg, ""},
		{jwtNotJSON, ""},
		{"www.example.com", ""},
		{"eyJhbGciOiJIUzI1NiJ9.x", ""},
	},
	"api_key": {
		{"OPENAI_API_KEY=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv"},
		{"use sk-Ab3dEf6hIj9kLm2nOp5qRs8tUv1", "sk-Ab3dEf6hIj9kLm2nOp5qRs8tUv1"},
		{"sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"},
		{"rk_live_51H8xYz2eZvKYlo2C0aBcDeF", "rk_live_51H8xYz2eZvKYlo2C0aBcDeF"},
		{"xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"},
		{"key=AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe", "AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe"},
		{"api_key=Zx8fQ2mP9wLk3Rt7Vb1N", "Zx8fQ2mP9wLk3Rt7Vb1N"},
		{`{"apiKey": "9f8e7d6c5b4a39281706f5e4d3c2b1a0"}`, "9f8e7d6c5b4a39281706f5e4d3c2b1a0"},
		{"X-Api-Key: Qm93ZTl2Rk9uZ3ZrM2tB", "Qm93ZTl2Rk9uZ3ZrM2tB"},
		{"client_secret: 'p4Ss-W0rd-Xy7Zq9Lk2M'", "p4Ss-W0rd-Xy7Zq9Lk2M"},
		{"token=ab12CD34ef56GH78ij90", "ab12CD34ef56GH78ij90"},
		{"api_key=YOUR_API_KEY_HERE", ""},
		{"token=${GITHUB_TOKEN}", ""},
		{"max_tokens: 1024", ""},
		{"api_key = process.env.OPENAI_API_KEY", ""},
		{"secret=aaaaaaaaaaaaaaaa1111", ""},
		{"if token == expected_token_value1", ""},
		{"task-Ab3dEf6hIj9kLm2nOp5qRs8tUv1", ""},
		{"sk-learn", ""},
		{"AIzaShort", ""},
	},
}

func TestKinds(t *testing.T) {
	for kind, cases := range kindCases {
		for _, c := range cases {
			ms := Find(c.in, []string{kind})
			got := ""
			if len(ms) > 0 {
				got = c.in[ms[0].Start:ms[0].End]
				if ms[0].Kind != kind {
					t.Errorf("%s: Find(%q) kind %q", kind, c.in, ms[0].Kind)
				}
			}
			if got != c.want {
				t.Errorf("%s: Find(%q) = %q, want %q (all: %v)", kind, c.in, got, c.want, ms)
			}
			var group []string
			if slices.Contains(PIIKinds, kind) {
				group = PII(c.in)
			} else {
				group = Secrets(c.in)
			}
			if has := slices.Contains(group, kind); has != (c.want != "") {
				t.Errorf("%s: group function on %q = %v", kind, c.in, group)
			}
		}
	}
	for _, k := range append(append([]string{}, PIIKinds...), SecretKinds...) {
		if len(kindCases[k]) == 0 {
			t.Errorf("no cases for %s", k)
		}
	}
}

func TestGroups(t *testing.T) {
	s := "Contact jane@example.com or +1 555 234 5678, card 4111111111111111, key AKIAIOSFODNN7EXAMPLE and " + ghp
	if got, want := PII(s), []string{"credit_card", "email", "phone"}; !reflect.DeepEqual(got, want) {
		t.Errorf("PII = %v, want %v", got, want)
	}
	if got, want := Secrets(s), []string{"aws_access_key", "github_token"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Secrets = %v, want %v", got, want)
	}
	if got := PII("nothing to see here"); len(got) != 0 {
		t.Errorf("PII on clean text = %v", got)
	}
	if got := Secrets(""); len(got) != 0 {
		t.Errorf("Secrets(\"\") = %v", got)
	}
}

func TestExpandKinds(t *testing.T) {
	got, err := ExpandKinds([]string{"email", "pii", "jwt", "email"})
	want := []string{"email", "phone", "credit_card", "iban", "ssn", "ip_address", "jwt"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ExpandKinds = %v, %v; want %v", got, err, want)
	}
	got, err = ExpandKinds([]string{"secrets"})
	if err != nil || !reflect.DeepEqual(got, SecretKinds) {
		t.Errorf("ExpandKinds(secrets) = %v, %v", got, err)
	}
	if _, err := ExpandKinds([]string{"email", "passport"}); err == nil || !strings.Contains(err.Error(), `"passport"`) {
		t.Errorf("ExpandKinds(passport) error = %v", err)
	}
	if got, err := ExpandKinds(nil); err != nil || len(got) != 0 {
		t.Errorf("ExpandKinds(nil) = %v, %v", got, err)
	}
	if !IsKind("pii") || !IsKind("api_key") || IsKind("PII") || IsKind("") {
		t.Error("IsKind")
	}
}

func TestRedact(t *testing.T) {
	cases := []struct {
		in    string
		kinds []string
		want  string
	}{
		{"mail a@b.io or call +44 20 7946 0958", []string{"email", "phone"}, "mail [REDACTED:email] or call [REDACTED:phone]"},
		{"mail a@b.io or call +44 20 7946 0958", []string{"email"}, "mail [REDACTED:email] or call +44 20 7946 0958"},
		{"card 4111 1111 1111 1111, ssn 123-45-6789", []string{"pii"}, "card [REDACTED:credit_card], ssn [REDACTED:ssn]"},
		{"Bearer " + jwtValid, []string{"secrets"}, "Bearer [REDACTED:jwt]"},
		{"api_key=" + jwtValid, []string{"secrets"}, "api_key=[REDACTED:jwt]"},
		{"key\n" + pem + "\n", []string{"secrets", "pii"}, "key\n[REDACTED:private_key]\n"},
		{"nothing here", []string{"pii", "secrets"}, "nothing here"},
		{"a@b.io", []string{"nope"}, "a@b.io"},
		{"", []string{"pii"}, ""},
	}
	for _, c := range cases {
		got, changed := Redact(c.in, c.kinds)
		if got != c.want || changed != (c.in != c.want) {
			t.Errorf("Redact(%q, %v) = %q, %v; want %q", c.in, c.kinds, got, changed, c.want)
		}
	}
}

func TestFindOverlap(t *testing.T) {
	// The IPv4 inside an IPv6 literal and an api_key value that is a JWT:
	// the longest candidate wins, no nesting.
	s := "::ffff:192.0.2.1 token=" + jwtValid
	ms := Find(s, []string{"pii", "secrets"})
	if len(ms) != 2 || ms[0].Kind != "ip_address" || s[ms[0].Start:ms[0].End] != "::ffff:192.0.2.1" || ms[1].Kind != "jwt" {
		t.Fatalf("Find = %v", ms)
	}
	for i := 1; i < len(ms); i++ {
		if ms[i].Start < ms[i-1].End {
			t.Errorf("overlap %v", ms)
		}
	}
}

func TestInvalidUTF8(t *testing.T) {
	for _, s := range []string{"\xff\xfe@\xe2\x80", "a@b.co\xe2", "\xf3\xa0\x81", "\xe2\x80\x8b\xe2", "+1 555\xff234 5678"} {
		Find(s, []string{"pii", "secrets"})
		Redact(s, []string{"pii", "secrets"})
		if v := Injection(s); v < 0 || v > 1 {
			t.Errorf("Injection(%q) = %v", s, v)
		}
	}
}

func TestIBANValidAndEntropy(t *testing.T) {
	if !IBANValid("DE89 3704 0044 0532 0130 00") || IBANValid("DE88 3704 0044 0532 0130 00") || IBANValid("x DE89370400440532013000") {
		t.Error("IBANValid")
	}
	if Entropy("") != 0 || Entropy("aaaa") != 0 || Entropy("abcd") != 2 {
		t.Error("Entropy")
	}
}

func TestNextNumber(t *testing.T) {
	naive := func(s string, i int) int {
		for i < len(s) && !isDigit(s[i]) {
			i++
		}
		return i
	}
	alphabet := []byte("/09:a\x80\xff\xaf\xb0\xb9 .Z")
	seed := uint32(7)
	for n := 0; n < 2000; n++ {
		b := make([]byte, n%40)
		for j := range b {
			seed = seed*1664525 + 1013904223
			b[j] = alphabet[int(seed>>24)%len(alphabet)]
		}
		s := string(b)
		for i := 0; i <= len(s); i++ {
			if got, want := nextNumber(s, i), naive(s, i); got != want {
				t.Fatalf("nextNumber(%q, %d) = %d, want %d", s, i, got, want)
			}
		}
	}
}
