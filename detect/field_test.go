package detect

import (
	"encoding/json"
	"testing"
)

// A credential under a secret-named key is found with its key, and values
// that are not credentials, or keys that do not name one, are not.
func TestField(t *testing.T) {
	const key = "Zx8fQ2mP9wLk3Rt7Vb1N"
	for _, c := range []struct {
		key, value, want string
	}{
		{"api_key", key, key},
		{"apiKey", "9f8e7d6c5b4a39281706f5e4d3c2b1a0", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"},
		{"X-Api-Key", key, key},
		{"password", "p4Ss-W0rd-Xy7Zq9Lk2M", "p4Ss-W0rd-Xy7Zq9Lk2M"},
		{"db_passwd", key, key},
		{"token", key, key},
		{"access_token", key, key},
		{"client_secret", key, key},
		{"secret", key, key},
		{"AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
		{"Authorization", "Bearer " + key, key},
		{"authorization", "Basic dXNlcjpwYXNzd29yZDEyMzQ1", "dXNlcjpwYXNzd29yZDEyMzQ1"},
		{"private_key", key, key},
		// Not a credential: short, empty, low entropy, a placeholder, a
		// reference, prose, a number's key, a known format (its own kind).
		{"token", "abc", ""},
		{"password", "", ""},
		{"password", "hunter2", ""},
		{"secret", "aaaaaaaaaaaaaaaa1111", ""},
		{"api_key", "YOUR_API_KEY_HERE", ""},
		{"token", "${GITHUB_TOKEN}", ""},
		{"api_key", "process.env.OPENAI_API_KEY", ""},
		{"password", "please ask the admin for it 2024", ""},
		{"token", "ghp_" + "aB3dE6gH9kaB3dE6gH9kaB3dE6gH9kLmN0pQ", ""},
		{"token", "AKIAIOSFODNN7EXAMPLE", ""},
		// Not a secret's key.
		{"max_tokens", key, ""},
		{"token_count", key, ""},
		{"tokenizer", key, ""},
		{"secret_name", key, ""},
		{"api_key_id", key, ""},
		{"id", key, ""},
		{"request_id", "0190f5e4-3c2b-7a18-9d06-5b4a39281706", ""},
		{"sha256", "9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0", ""},
		// Pagination cursors are opaque but grant nothing.
		{"pageToken", key, ""},
		{"next_page_token", key, ""},
		{"nextToken", key, ""},
		{"continuation_token", key, ""},
	} {
		m, ok := Field(c.key, c.value)
		got := ""
		if ok {
			got = c.value[m.Start:m.End]
			if m.Kind != "api_key" {
				t.Errorf("Field(%q, %q) kind %q", c.key, c.value, m.Kind)
			}
		}
		if got != c.want {
			t.Errorf("Field(%q, %q) = %q, want %q", c.key, c.value, got, c.want)
		}
	}
}

// HasSecretField walks object members and name/value pairs at any depth.
func TestHasSecretField(t *testing.T) {
	for _, c := range []struct {
		json string
		want bool
	}{
		{`{"api_key": "Zx8fQ2mP9wLk3Rt7Vb1N"}`, true},
		{`{"config": {"auth": {"apiKey": "Zx8fQ2mP9wLk3Rt7Vb1N"}}}`, true},
		{`{"inputs": [{"name": "to", "value": "a@example.com"}, {"name": "password", "value": "p4Ss-W0rd-Xy7Zq9Lk2M"}]}`, true},
		{`{"headers": [{"key": "Authorization", "value": "Bearer Zx8fQ2mP9wLk3Rt7Vb1N"}]}`, true},
		{`[{"env": [{"name": "AWS_SECRET_ACCESS_KEY", "value": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}]}]`, true},
		{`{"max_tokens": 100, "token_count": 12, "token": "abc", "password": ""}`, false},
		{`{"inputs": [{"name": "api_key", "value": 12345678901234567890}]}`, false},
		{`{"inputs": [{"name": "query", "value": "Zx8fQ2mP9wLk3Rt7Vb1N"}]}`, false},
		{`{"pageToken": "CiAKGjBpNDd2Nmp2Zml2cXRmdHFjMmYxbXE0b3UQAg"}`, false},
		{`{"api_key": ["Zx8fQ2mP9wLk3Rt7Vb1N"]}`, false},
		{`"api_key"`, false},
	} {
		var v any
		if err := json.Unmarshal([]byte(c.json), &v); err != nil {
			t.Fatal(err)
		}
		if got := HasSecretField(v); got != c.want {
			t.Errorf("HasSecretField(%s) = %v, want %v", c.json, got, c.want)
		}
	}
}

func TestRedactField(t *testing.T) {
	got, ok := RedactField("Authorization", "Bearer Zx8fQ2mP9wLk3Rt7Vb1N", []string{"secrets"})
	if !ok || got != "Bearer [REDACTED:api_key]" {
		t.Errorf("RedactField = %q %v", got, ok)
	}
	if got, ok := RedactField("api_key", "Zx8fQ2mP9wLk3Rt7Vb1N", []string{"pii", "jwt"}); ok || got != "Zx8fQ2mP9wLk3Rt7Vb1N" {
		t.Errorf("RedactField without api_key = %q %v", got, ok)
	}
	if got, ok := RedactField("api_key", "[REDACTED:api_key]", []string{"api_key"}); ok {
		t.Errorf("RedactField of a redacted value = %q", got)
	}
}
