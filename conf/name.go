package conf

import (
	"errors"
	"maps"
	"slices"
)

// errName is why a name is refused.
var errName = errors.New("a name may hold letters, digits, '-', '_' and '.'")

// CheckName accepts a name as the config gives them — a token's, a
// tenant's, an upstream's: one or more letters, digits, '-', '_' and '.'.
func CheckName(s string) error {
	if s == "" {
		return errName
	}
	for _, r := range s {
		if !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return errName
		}
	}
	return nil
}

// CheckNames checks the names of a mapping of named entries (CheckName),
// for a section's Validate: field is the mapping's key in the section
// ("servers"), and each error names its entry ("servers.a/b").
func CheckNames[V any](field string, m map[string]V) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if err := CheckName(name); err != nil {
			errs = append(errs, Errorf(field+"."+name, "%v", err))
		}
	}
	return errors.Join(errs...)
}
