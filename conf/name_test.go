package conf

import (
	"errors"
	"fmt"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestCheckName(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"acme", true}, {"a-b_c.d9", true}, {"A", true},
		{"", false}, {"a/b", false}, {"a b", false}, {"é", false},
	} {
		if err := CheckName(c.name); (err == nil) != c.ok {
			t.Errorf("CheckName(%q) = %v, want ok %v", c.name, err, c.ok)
		}
	}
}

// named is a section with named entries and a list its Validate checks
// item by item, joining its parts' errors.
type named struct {
	Entries map[string]inner `yaml:"entries"`
	Paths   []string         `yaml:"paths"`
}

func (s *named) Validate() error {
	errs := []error{CheckNames("entries", s.Entries)}
	for i, p := range s.Paths {
		if p == "" {
			errs = append(errs, Errorf(fmt.Sprintf("paths[%d]", i), "empty path"))
		}
	}
	return errors.Join(errs...)
}

func TestValidatePlacesNamesAndItems(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		// Each name CheckNames refuses is placed at its entry, though
		// Validate joins CheckNames' joined errors.
		{"names", "entries:\n  ok: {}\n  a/b: {max_per_session: 1}\n  c d: {}\n",
			"w.yaml:3: sec.entries.a/b: a name may hold letters, digits, '-', '_' and '.'\nw.yaml:4: sec.entries.c d: a name may hold letters, digits, '-', '_' and '.'"},
		// Validate's error about a list item is placed at the item.
		{"list item", "paths:\n  - a\n  - \"\"\n", "w.yaml:3: sec.paths[1]: empty path"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(c.src), &doc); err != nil {
				t.Fatal(err)
			}
			var s named
			if errs := Decode("w.yaml", "sec", doc.Content[0], &s).Error(); errs != c.want {
				t.Fatalf("errors:\n%s\nwant:\n%s", errs, c.want)
			}
		})
	}
}
