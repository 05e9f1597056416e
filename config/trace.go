package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Trace is the config's `trace:` section: what the trace keeps and for how
// long. The zero value redacts detector matches and keeps every record.
type Trace struct {
	// RawInput keeps records' input, output and views as received
	// (trace.raw_input: true); by default every detector match in them is
	// stored as [REDACTED:<kind>:<hmac8>].
	RawInput bool
	// Retention prunes records older than this (trace.retention: 30d,
	// 12h); 0 keeps them.
	Retention time.Duration
	// MaxSize prunes the oldest records while the trace is larger than
	// this many bytes (trace.max_size: 10GiB, 500MB); 0 means no bound.
	MaxSize int64
	// OCSFFile, when set, is a JSONL file every decision is appended to as
	// OCSF events (trace.ocsf_file; relative to the working directory).
	OCSFFile string
	// OCSFMaxSize rotates the OCSF file once it would grow past this many
	// bytes (trace.ocsf_max_size, default 100MiB); OCSFMaxFiles rotated
	// files are kept besides it (trace.ocsf_max_files, default 5). 0
	// means the default.
	OCSFMaxSize  int64
	OCSFMaxFiles int
	// OCSFQueue bounds the events waiting to be written
	// (trace.ocsf_queue, default 4096; 0 means the default); beyond it
	// they are dropped and counted, never waited for.
	OCSFQueue int
}

// Defaults of the trace.ocsf_* keys.
const (
	DefaultOCSFMaxSize  = 100 << 20
	DefaultOCSFMaxFiles = 5
	DefaultOCSFQueue    = 4096
)

const traceKeys = "raw_input, retention, max_size, ocsf_file, ocsf_max_size, ocsf_max_files, ocsf_queue"

// parseTrace reads `trace: {raw_input, retention, max_size}`.
func parseTrace(file string, v *yaml.Node) (Trace, ErrorList) {
	var t Trace
	var errs ErrorList
	add := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, Error{File: file, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
	}
	if v.Kind != yaml.MappingNode {
		add(v, "trace: expected a mapping with %s", traceKeys)
		return t, errs
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, n := v.Content[i], v.Content[i+1]
		if n.Kind != yaml.ScalarNode {
			add(n, "trace.%s: expected a value", k.Value)
			continue
		}
		switch k.Value {
		case "raw_input":
			b, err := strconv.ParseBool(n.Value)
			if err != nil || n.Tag != "!!bool" {
				add(n, "trace.raw_input: expected true or false, got %q", n.Value)
				continue
			}
			t.RawInput = b
		case "retention":
			d, err := ParseAge(n.Value)
			if err != nil {
				add(n, "trace.retention: %v", err)
				continue
			}
			t.Retention = d
		case "max_size":
			b, err := ParseSize(n.Value)
			if err != nil {
				add(n, "trace.max_size: %v", err)
				continue
			}
			t.MaxSize = b
		case "ocsf_file":
			if strings.TrimSpace(n.Value) == "" || strings.ContainsRune(n.Value, 0) {
				add(n, "trace.ocsf_file: expected a file path, got %q", n.Value)
				continue
			}
			t.OCSFFile = n.Value
		case "ocsf_max_size":
			b, err := ParseSize(n.Value)
			if err != nil || b < 4096 {
				add(n, "trace.ocsf_max_size: expected a size of at least 4KiB such as 100MiB, got %q", n.Value)
				continue
			}
			t.OCSFMaxSize = b
		case "ocsf_max_files", "ocsf_queue":
			x, err := strconv.Atoi(n.Value)
			lo, hi := 1, 1<<20
			if k.Value == "ocsf_max_files" {
				lo, hi = 1, 1000
			}
			if err != nil || x < lo || x > hi {
				add(n, "trace.%s: expected a whole number from %d to %d, got %q", k.Value, lo, hi, n.Value)
				continue
			}
			if k.Value == "ocsf_queue" {
				t.OCSFQueue = x
			} else {
				t.OCSFMaxFiles = x
			}
		default:
			add(k, "trace: unknown key %q (want %s)", k.Value, traceKeys)
		}
	}
	return t, errs
}

// ParseAge reads an age: a Go duration (12h, 90m) or a whole number of days
// (30d). It must be positive.
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 64)
		if err != nil || n > int64(1<<63-1)/int64(24*time.Hour) {
			return 0, fmt.Errorf("expected an age such as 30d, 12h or 90m, got %q", s)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("expected an age such as 30d, 12h or 90m, got %q", s)
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("expected a positive age, got %q", s)
	}
	return d, nil
}

// sizeUnits are the units ParseSize takes (case-insensitive).
var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// ParseSize reads a size in bytes: a whole number with an optional unit,
// B, KB/MB/GB/TB (powers of 1000) or KiB/MiB/GiB/TiB (powers of 1024; K,
// M, G, T are the same). It must be positive.
func ParseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range sizeUnits {
		if n, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<63-1)/mult {
		return 0, fmt.Errorf("expected a positive size such as 10GiB or 500MB, got %q", s)
	}
	return n * mult, nil
}
