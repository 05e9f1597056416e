package audit

import (
	"testing"
	"time"

	"github.com/wardenhq/warden/conf"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1": 1, "500MB": 500e6, "10GiB": 10 << 30, "4k": 4096, "2 TB": 2e12, "7b": 7, "3KiB": 3072, "1tib": 1 << 40} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("%s: %d %v, want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "-1", "10XB", "", "9223372036854775807k"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("%q: %d, want an error", in, got)
		}
	}
}

func TestTraceConfig(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       TraceConfig
		err        string // the errors, "" for none
	}{
		{name: "empty", yaml: "{}", want: TraceConfig{}},
		{name: "everything", yaml: "{raw_input: true, retention: 30d, max_size: 10GiB, ocsf_file: d/o.jsonl, ocsf_max_size: 4k, ocsf_max_files: 1000, ocsf_queue: 1}",
			want: TraceConfig{RawInput: true, Retention: 30 * 24 * time.Hour, MaxSize: 10 << 30, OCSFFile: "d/o.jsonl", OCSFMaxSize: 4096, OCSFMaxFiles: 1000, OCSFQueue: 1}},
		{name: "retention in hours", yaml: "{retention: 12h}", want: TraceConfig{Retention: 12 * time.Hour}},
		{name: "ocsf_max_size too small", yaml: "{ocsf_max_size: 4095}", err: `w.yaml:1: trace.ocsf_max_size: expected a size of at least 4KiB such as 100MiB, got 4095 bytes`},
		{name: "ocsf_file blank", yaml: "{ocsf_file: \" \"}", err: `w.yaml:1: trace.ocsf_file: expected a file path, got " "`},
		{name: "ocsf_file empty", yaml: "{ocsf_file: \"\"}", err: `w.yaml:1: trace.ocsf_file: expected a file path, got ""`},
		{name: "ocsf_file NUL", yaml: "{ocsf_file: \"a\\0b\"}", err: `w.yaml:1: trace.ocsf_file: expected a file path, got "a\x00b"`},
		{name: "ocsf_max_files", yaml: "{ocsf_max_files: 1001}", err: `w.yaml:1: trace.ocsf_max_files: expected a whole number in 1..1000, got "1001"`},
		{name: "ocsf_queue", yaml: "{ocsf_queue: 0}", err: `w.yaml:1: trace.ocsf_queue: expected a whole number in 1..1048576, got "0"`},
		{name: "max_size a list", yaml: "{max_size: [1]}", err: `w.yaml:1: trace.max_size: expected a positive size such as 10GiB or 500MB`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got TraceConfig
			errs := conf.DecodeYAML("w.yaml", "trace", []byte(tc.yaml), &got)
			if msg := errs.Error(); msg != tc.err {
				t.Fatalf("errors %q, want %q", msg, tc.err)
			}
			if tc.err == "" && got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
