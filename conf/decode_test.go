package conf

import (
	"errors"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

type inner struct {
	MaxPerSession int `yaml:"max_per_session" range:"1..1000"`
}

type section struct {
	Batch    int               `yaml:"batch" range:"1..1_000_000"`
	Sample   float64           `yaml:"sample" range:"0..1"`
	Timeout  time.Duration     `yaml:"timeout" range:"100ms..1h"`
	Size     Bytes             `yaml:"size" range:"1KiB.."`
	Protocol string            `yaml:"protocol" oneof:"http/protobuf|grpc"`
	URL      string            `yaml:"url" conf:"env,url"`
	On       *bool             `yaml:"on"`
	Paths    []string          `yaml:"paths" conf:"one"`
	Headers  map[string]string `yaml:"headers" conf:"env"`
	Defer    inner             `yaml:"defer"`
	Custom   upper             `yaml:"custom"`
	Computed string            // not a key
}

// upper decodes itself: a scalar, kept upper-cased.
type upper string

func (u *upper) UnmarshalConf(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.Value == "" {
		return errors.New("expected a word")
	}
	*u = upper(strings.ToUpper(n.Value))
	return nil
}

func (s *section) Validate() error {
	var errs []error
	if s.Batch > 500 && s.Sample == 1 {
		errs = append(errs, Errorf("batch", "%d is too large at sample 1", s.Batch))
	}
	if s.URL == "" {
		errs = append(errs, Errorf("", "url is required"))
	}
	return errors.Join(errs...)
}

func decode(t *testing.T, src string) (section, string) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	s := section{Batch: 10, Sample: 1, Timeout: time.Second, Protocol: "grpc"}
	errs := Decode("w.yaml", "sec", doc.Content[0], &s)
	return s, errs.Error()
}

func TestDecode(t *testing.T) {
	t.Setenv("CONF_TEST_HOST", "collector")
	s, errs := decode(t, `
batch: 7
sample: 0.5
timeout: 2m
size: 8MiB
protocol: http/protobuf
url: http://${CONF_TEST_HOST}:4318
on: false
paths: one.yaml
headers: {x-api-key: "k-${CONF_TEST_HOST}"}
defer: {max_per_session: 9}
custom: word
`)
	if errs != "" {
		t.Fatalf("errors: %s", errs)
	}
	want := section{Batch: 7, Sample: 0.5, Timeout: 2 * time.Minute, Size: 8 << 20, Protocol: "http/protobuf",
		URL: "http://collector:4318", Paths: []string{"one.yaml"}, Headers: map[string]string{"x-api-key": "k-collector"},
		Defer: inner{MaxPerSession: 9}, Custom: "WORD"}
	if s.On == nil || *s.On {
		t.Fatalf("on = %v, want a pointer to false", s.On)
	}
	s.On = nil
	if s.Batch != want.Batch || s.Sample != want.Sample || s.Timeout != want.Timeout || s.Size != want.Size ||
		s.Protocol != want.Protocol || s.URL != want.URL || strings.Join(s.Paths, ",") != "one.yaml" ||
		s.Headers["x-api-key"] != "k-collector" || s.Defer != want.Defer || s.Custom != want.Custom {
		t.Fatalf("got %+v\nwant %+v", s, want)
	}
}

func TestDecodeDefaultsKept(t *testing.T) {
	s, errs := decode(t, "url: http://x\n")
	if errs != "" || s.Batch != 10 || s.Timeout != time.Second || s.Protocol != "grpc" || s.On != nil {
		t.Fatalf("got %+v, %q", s, errs)
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Setenv("CONF_TEST_SET", "1")
	for _, c := range []struct{ name, src, want string }{
		{"unknown key", "url: http://x\nbatchh: 3\n", `w.yaml:2: sec: unknown key "batchh" (want batch, sample, timeout, size, protocol, url, on, paths, headers, defer, custom)`},
		{"not a mapping", "[1, 2]\n", "w.yaml:1: sec: expected a mapping with batch,"},
		{"int range", "url: http://x\nbatch: 0\n", `w.yaml:2: sec.batch: expected a whole number in 1..1_000_000, got "0"`},
		{"int type", "url: http://x\nbatch: [1]\n", `w.yaml:2: sec.batch: expected a whole number in 1..1_000_000`},
		{"float", "url: http://x\nsample: 2\n", `w.yaml:2: sec.sample: expected a number in 0..1, got "2"`},
		{"float NaN", "url: http://x\nsample: .nan\n", `sec.sample: expected a number in 0..1, got ".nan"`},
		{"duration", "url: http://x\ntimeout: 5\n", `w.yaml:2: sec.timeout: expected a duration in 100ms..1h such as 30s, got "5"`},
		{"size", "url: http://x\nsize: 10\n", `w.yaml:2: sec.size: expected a size of at least 1KiB such as 8MiB or 1048576, got "10"`},
		{"oneof", "url: http://x\nprotocol: udp\n", `w.yaml:2: sec.protocol: expected http/protobuf or grpc, got "udp"`},
		{"url", "url: ftp://x\n", `w.yaml:1: sec.url: expected an http(s) URL, got "ftp://x"`},
		{"env unset", "url: http://${CONF_TEST_UNSET_VAR}\n", `w.yaml:1: sec.url: environment variable CONF_TEST_UNSET_VAR is not set`},
		{"bool", "url: http://x\non: yes\n", `w.yaml:2: sec.on: expected true or false, got "yes"`},
		{"list", "url: http://x\npaths: {a: 1}\n", `w.yaml:2: sec.paths: expected a list`},
		{"nested", "url: http://x\ndefer:\n  max_per_session: 5000\n", `w.yaml:3: sec.defer.max_per_session: expected a whole number in 1..1000, got "5000"`},
		{"nested unknown", "url: http://x\ndefer: {max: 1}\n", `w.yaml:2: sec.defer: unknown key "max" (want max_per_session)`},
		{"custom", "url: http://x\ncustom: [a]\n", `w.yaml:2: sec.custom: expected a word`},
		{"twice", "url: http://x\nbatch: 1\nbatch: 2\n", `sec: key "batch" appears twice`},
		{"validate field", "url: http://x\nbatch: 600\n", `w.yaml:2: sec.batch: 600 is too large at sample 1`},
		{"validate section", "batch: 3\n", `w.yaml:1: sec: url is required`},
		{"every error", "batch: 0\nsample: 5\n", "sec.batch: expected a whole number in 1..1_000_000, got \"0\"\nw.yaml:2: sec.sample: expected a number in 0..1, got \"5\"\nw.yaml:1: sec: url is required"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, errs := decode(t, c.src)
			if !strings.Contains(errs, c.want) {
				t.Fatalf("errors:\n%s\nwant:\n%s", errs, c.want)
			}
		})
	}
}

// required is a section with a key that must be given.
type required struct {
	URL  string `yaml:"url" conf:"env,url,required"`
	Name string `yaml:"name"`
}

func TestDecodeRequired(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"given", "url: http://x\n", ""},
		{"absent", "name: a\n", `w.yaml:1: sec: missing url`},
		{"empty mapping", "{}\n", `w.yaml:1: sec: missing url`},
		{"given but invalid: one error", "name: a\nurl: ftp://x\n", `w.yaml:2: sec.url: expected an http(s) URL, got "ftp://x"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(c.src), &doc); err != nil {
				t.Fatal(err)
			}
			var r required
			if got := Decode("w.yaml", "sec", doc.Content[0], &r).Error(); got != c.want {
				t.Fatalf("errors:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

func TestKeys(t *testing.T) {
	if got := Keys(section{}); got != "batch, sample, timeout, size, protocol, url, on, paths, headers, defer, custom" {
		t.Fatal(got)
	}
}

// FuzzDecode: any YAML decodes to a section or to located errors, never a
// panic.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"batch: 3\nurl: http://x\n", "defer: {max_per_session: x}", "paths: [a, [b]]", "headers: {a: [1]}", "&a {b: *a}", "custom: *x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var doc yaml.Node
		if yaml.Unmarshal([]byte(src), &doc) != nil || len(doc.Content) == 0 {
			return
		}
		var s section
		errs := Decode("f.yaml", "sec", doc.Content[0], &s)
		for _, e := range errs {
			if e.File != "f.yaml" || e.Msg == "" {
				t.Fatalf("unlocated error %+v", e)
			}
		}
	})
}
