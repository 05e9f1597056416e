package seal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wardenhq/warden/conf"
	"github.com/wardenhq/warden/internal/keyfile"
)

// KEKFileEnv names the environment variable that gives the KEK's file when
// the config names none; KEKFileName is the file's name in the default
// place (DefaultKEKFile).
const (
	KEKFileEnv  = "WARDEN_SEAL_KEK_FILE"
	KEKFileName = "seal.kek"
)

// Config is the config's trace.seal: section (docs/security.md "Sealed
// originals"): whether the originals of redacted values are kept sealed,
// where the KEK comes from, how long a period is and how long originals
// are kept.
type Config struct {
	// Enabled keeps the originals of redacted values sealed beside the
	// records (trace.seal.enabled; default true). It has no effect with
	// trace.raw_input (nothing is redacted).
	Enabled *bool `yaml:"enabled"`
	// KEKFile is the KEK's file (trace.seal.kek_file): 32 raw bytes,
	// "hex:…" or "base64:…", mode 0600; created with a random key when
	// missing. Default: $WARDEN_SEAL_KEK_FILE, else seal.kek in warden's
	// user configuration directory (DefaultKEKFile) — outside the data
	// directory, so a copy of it does not hold the key.
	KEKFile string `yaml:"kek_file" conf:"env"`
	// KEKEnv names an environment variable holding the KEK instead
	// (trace.seal.kek_env), written as in a file; for a fleet, every
	// replica is given the same one.
	KEKEnv string `yaml:"kek_env"`
	// Period is how long one data key seals a tenant's values
	// (trace.seal.period: day, month or year; default day): retention
	// destroys whole periods, so originals outlive Retention by at most
	// one period.
	Period string `yaml:"period" oneof:"day|month|year"`
	// Retention destroys the keys of periods that ended longer ago than
	// this (trace.seal.retention: 30d; default trace.retention; 0 with
	// neither: kept). The records stay, redacted, and still verify.
	Retention time.Duration `yaml:"retention" conf:"days" range:"1h.."`
}

// Validate refuses two sources of the KEK.
func (c *Config) Validate() error {
	if c.KEKFile != "" && c.KEKEnv != "" {
		return conf.Errorf("kek_env", "expected one of kek_file and kek_env, got both")
	}
	return nil
}

// On reports whether originals are sealed.
func (c Config) On() bool { return c.Enabled == nil || *c.Enabled }

// Granularity is Period's.
func (c Config) Granularity() Granularity {
	switch c.Period {
	case "month":
		return Month
	case "year":
		return Year
	}
	return Day
}

// DefaultKEKFile is the KEK's file when the config names none: the file
// $WARDEN_SEAL_KEK_FILE names, else seal.kek in warden's user
// configuration directory ($XDG_CONFIG_HOME/warden, ~/.config/warden on
// Linux).
func DefaultKEKFile() (string, error) {
	if p := os.Getenv(KEKFileEnv); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("seal: no place for the KEK (%v): set trace.seal.kek_file, trace.seal.kek_env or %s", err, KEKFileEnv)
	}
	return filepath.Join(dir, "warden", KEKFileName), nil
}

// KEK returns the section's KEK and where it came from ("env NAME" or the
// file's path): KEKEnv's variable, else KEKFile (or DefaultKEKFile),
// created with a random key when missing.
func (c Config) KEK() (KEK, string, error) {
	if c.KEKEnv != "" {
		k, err := EnvKEK(c.KEKEnv)
		return k, "env " + c.KEKEnv, err
	}
	path := c.KEKFile
	if path == "" {
		var err error
		if path, err = DefaultKEKFile(); err != nil {
			return nil, "", err
		}
	}
	if err := CreateKEKFile(path); err != nil {
		return nil, path, err
	}
	k, err := FileKEK(path)
	return k, path, err
}

// InDir reports whether the KEK file path lies inside dir — a data
// directory: a copy of the directory then opens every sealed original, so
// callers warn.
func InDir(path, dir string) bool {
	p, err1 := filepath.Abs(path)
	d, err2 := filepath.Abs(dir)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// ErrNoKEK is returned by ExistingKEK when the KEK's file does not exist.
var ErrNoKEK = errors.New("seal: no KEK file")

// ExistingKEK is KEK for a reader that must not create a key (replay,
// forget on a trace that has none): a missing file is ErrNoKEK, with the
// path.
func (c Config) ExistingKEK() (KEK, string, error) {
	if c.KEKEnv != "" {
		return c.KEK()
	}
	path := c.KEKFile
	if path == "" {
		var err error
		if path, err = DefaultKEKFile(); err != nil {
			return nil, "", err
		}
	}
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return nil, path, fmt.Errorf("%w: %s", ErrNoKEK, path)
	}
	k, err := FileKEK(path)
	return k, path, err
}

// CreateKEKFile writes a random KEK (KeySize raw bytes, mode 0600) to
// path, and its directory (mode 0700), unless the file exists.
func CreateKEKFile(path string) error {
	if _, err := os.Lstat(path); err == nil || !errors.Is(err, os.ErrNotExist) {
		return nil // there (FileKEK checks it), or FileKEK reports why not
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("seal: KEK file: %w", err)
	}
	_, err := keyfile.Load(keyfile.Spec{Dir: filepath.Dir(path), Name: filepath.Base(path), Size: KeySize,
		What: "sealing KEK", Lost: "every sealed original then stays redacted for good"})
	if err != nil {
		return fmt.Errorf("seal: %w", err)
	}
	return nil
}
