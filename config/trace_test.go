package config

import (
	"strings"
	"testing"
	"time"
)

func TestTrace(t *testing.T) {
	c, err := Parse("w.yaml", []byte("trace:\n  raw_input: true\n  retention: 30d\n  max_size: 10GiB\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Trace{RawInput: true, Retention: 30 * 24 * time.Hour, MaxSize: 10 << 30}); c.Trace != want {
		t.Errorf("%+v", c.Trace)
	}
	for in, want := range map[string]string{
		"trace: 3":                "w.yaml:1: trace: expected a mapping",
		"trace: {raw_input: yes}": `trace.raw_input: expected true or false, got "yes"`,
		"trace: {retention: 3x}":  `trace.retention: expected an age such as 30d, 12h or 90m, got "3x"`,
		"trace: {retention: -1h}": "expected a positive age",
		"trace: {max_size: 10XB}": `trace.max_size: expected a positive size such as 10GiB or 500MB, got "10XB"`,
		"trace: {max_size: 0}":    "expected a positive size",
		"trace: {maxsize: 1}":     `trace: unknown key "maxsize"`,
		"trace: {retention: [1]}": "trace.retention: expected a value",
	} {
		if _, err := Parse("w.yaml", []byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %s", in, err, want)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1": 1, "500MB": 500e6, "10GiB": 10 << 30, "4k": 4096, "2 TB": 2e12, "7b": 7, "3KiB": 3072} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("%s: %d %v, want %d", in, got, err, want)
		}
	}
	for in, want := range map[string]time.Duration{"12h": 12 * time.Hour, "1d": 24 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := ParseAge(in); err != nil || got != want {
			t.Errorf("%s: %v %v, want %v", in, got, err, want)
		}
	}
}
