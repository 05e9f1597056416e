package audit

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/wardenhq/warden/conf"
	"github.com/wardenhq/warden/seal"
)

// TraceConfig is the config's trace: section: what the trace keeps and for
// how long, and the OCSF file decisions are also written to (package ocsf,
// docs/observability.md). The zero value redacts detector matches, keeps
// every record and writes no OCSF file.
type TraceConfig struct {
	// RawInput keeps records' input, output and views as received
	// (trace.raw_input: true); by default every detector match in them is
	// stored as [REDACTED:<kind>:<hmac8>].
	RawInput bool `yaml:"raw_input"`
	// Retention prunes records older than this (trace.retention: 30d,
	// 12h); 0 keeps them.
	Retention time.Duration `yaml:"retention" conf:"days" range:"1ns.."`
	// MaxSize prunes the oldest records while the trace is larger than
	// this many bytes (trace.max_size: 10GiB, 500MB); 0 means no bound.
	MaxSize Size `yaml:"max_size"`
	// OCSFFile, when set, is a JSONL file every decision is appended to as
	// OCSF events (trace.ocsf_file; relative to the working directory).
	OCSFFile FilePath `yaml:"ocsf_file"`
	// OCSFMaxSize rotates the OCSF file once it would grow past this many
	// bytes (trace.ocsf_max_size, at least 4KiB; 0 means ocsf's default,
	// 100MiB).
	OCSFMaxSize Size `yaml:"ocsf_max_size"`
	// OCSFMaxFiles rotated files are kept besides it
	// (trace.ocsf_max_files; 0 means ocsf's default, 5).
	OCSFMaxFiles int `yaml:"ocsf_max_files" range:"1..1000"`
	// OCSFQueue bounds the events waiting to be written
	// (trace.ocsf_queue; 0 means ocsf's default, 4096); beyond it they
	// are dropped and counted, never waited for.
	OCSFQueue int `yaml:"ocsf_queue" range:"1..1048576"`
	// Seal keeps the originals of redacted values sealed beside the
	// records (trace.seal: package seal, docs/security.md).
	Seal seal.Config `yaml:"seal"`
}

// minOCSFMaxSize is the smallest trace.ocsf_max_size: a rotated file holds
// at least a few events.
const minOCSFMaxSize = 4 << 10

// Validate checks what the field types cannot: the OCSF file's bound.
func (c *TraceConfig) Validate() error {
	if c.OCSFMaxSize != 0 && c.OCSFMaxSize < minOCSFMaxSize {
		return conf.Errorf("ocsf_max_size", "expected a size of at least 4KiB such as 100MiB, got %d bytes", c.OCSFMaxSize)
	}
	return nil
}

// Size is a positive number of bytes as the trace: keys write it: a whole
// number with an optional unit, B, KB/MB/GB/TB (powers of 1000) or
// KiB/MiB/GiB/TiB (powers of 1024; K, M, G, T are the same), in any case.
// (conf.Bytes, for limits:, takes fewer spellings.)
type Size int64

// UnmarshalConf reads a size (ParseSize).
func (s *Size) UnmarshalConf(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return errors.New("expected a positive size such as 10GiB or 500MB")
	}
	x, err := ParseSize(n.Value)
	if err != nil {
		return err
	}
	*s = Size(x)
	return nil
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

// ParseSize reads a Size. It must be positive.
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

// FilePath is a file the config names: not blank, without a NUL byte.
type FilePath string

// UnmarshalConf reads a file path.
func (p *FilePath) UnmarshalConf(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || strings.TrimSpace(n.Value) == "" || strings.ContainsRune(n.Value, 0) {
		return fmt.Errorf("expected a file path, got %q", n.Value)
	}
	*p = FilePath(n.Value)
	return nil
}
