package config

import (
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
)

func TestTrace(t *testing.T) {
	c, err := Parse("w.yaml", []byte("trace:\n  raw_input: true\n  retention: 30d\n  max_size: 10GiB\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (audit.TraceConfig{RawInput: true, Retention: 30 * 24 * time.Hour, MaxSize: 10 << 30}); c.Trace != want {
		t.Errorf("%+v", c.Trace)
	}
	for in, want := range map[string]string{
		"trace: 3":                "w.yaml:1: trace: expected a mapping",
		"trace: {raw_input: yes}": `trace.raw_input: expected true or false, got "yes"`,
		"trace: {retention: 3x}":  `trace.retention: expected a duration of at least 1ns such as 30s, got "3x"`,
		"trace: {retention: -1h}": `trace.retention: expected a duration of at least 1ns such as 30s, got "-1h"`,
		"trace: {max_size: 10XB}": `trace.max_size: expected a positive size such as 10GiB or 500MB, got "10XB"`,
		"trace: {max_size: 0}":    `trace.max_size: expected a positive size such as 10GiB or 500MB, got "0"`,
		"trace: {maxsize: 1}":     `trace: unknown key "maxsize"`,
		"trace: {retention: [1]}": "trace.retention: expected a duration",
	} {
		if _, err := Parse("w.yaml", []byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %s", in, err, want)
		}
	}
}
