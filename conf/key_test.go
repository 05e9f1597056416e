package conf

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestKeyMaterial(t *testing.T) {
	t.Setenv("CONF_TEST_KEY", "hex:00ff")
	for _, c := range []struct {
		name, in string
		want     []byte
		err      string
	}{
		{"text", "a secret", []byte("a secret"), ""},
		{"hex", "hex:000102", []byte{0, 1, 2}, ""},
		{"base64 padded", "base64:AAEC", []byte{0, 1, 2}, ""},
		{"base64 raw", "base64:AAECAw", []byte{0, 1, 2, 3}, ""},
		{"env", "${CONF_TEST_KEY}", []byte{0, 0xff}, ""},
		{"bad hex", "hex:zz-secret", nil, "hex: not valid hexadecimal"},
		{"bad base64", "base64:!!secret", nil, "base64: not valid base64"},
		{"unset", "${CONF_TEST_UNSET_KEY}", nil, "environment variable CONF_TEST_UNSET_KEY is not set"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := KeyMaterial(c.in)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || !bytes.Equal(got, c.want) {
				t.Fatalf("got %x, %v; want %x", got, err, c.want)
			}
		})
	}
}

// TestDecodeDays: a duration field with conf:"days" takes a whole number
// of days besides Go's durations; one without it does not.
func TestDecodeDays(t *testing.T) {
	type ages struct {
		Age   time.Duration `yaml:"age" range:"1m..30d" conf:"days"`
		Plain time.Duration `yaml:"plain"`
	}
	for _, c := range []struct {
		src, err string
		age      time.Duration
	}{
		{"age: 7d", "", 7 * 24 * time.Hour},
		{"age: 90m", "", 90 * time.Minute},
		{"age: 31d", `w.yaml:1: s.age: expected a duration in 1m..30d such as 30s, got "31d"`, 0},
		{"age: 1.5d", `s.age: expected a duration in 1m..30d such as 30s, got "1.5d"`, 0},
		{"age: -1d", `s.age: expected a duration in 1m..30d such as 30s, got "-1d"`, 0},
		{"age: 99999999999d", `got "99999999999d"`, 0},
		{"plain: 1d", `w.yaml:1: s.plain: expected a duration such as 30s, got "1d"`, 0},
	} {
		t.Run(c.src, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(c.src), &doc); err != nil {
				t.Fatal(err)
			}
			var a ages
			errs := Decode("w.yaml", "s", doc.Content[0], &a).Error()
			if c.err == "" && (errs != "" || a.Age != c.age) || c.err != "" && !strings.Contains(errs, c.err) {
				t.Fatalf("got %v, %q; want %v, %q", a.Age, errs, c.age, c.err)
			}
		})
	}
}
