package config

import (
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// parsePaths reads a list of policy files or directories — `policies:`,
// `shadow:`, a tenant's `policies:` — given as one path or a list of them.
// Relative paths are resolved against the config file's directory. key
// names the setting in messages ("shadow", "tenants.acme.policies"); each
// error names the line of the entry at fault.
func parsePaths(file, key string, v *yaml.Node) ([]string, ErrorList) {
	var errs ErrorList
	bad := func(n *yaml.Node, msg string) {
		errs = append(errs, Error{File: file, Line: n.Line, Msg: key + ": " + msg})
	}
	var items []*yaml.Node
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag == "!!null" {
			return nil, nil // `shadow:` with nothing after it: none
		}
		items = []*yaml.Node{v}
	case yaml.SequenceNode:
		items = v.Content
	default:
		bad(v, "expected a list of files or directories")
		return nil, errs
	}
	var out []string
	for _, n := range items {
		switch {
		case n.Kind != yaml.ScalarNode || n.Tag == "!!null":
			bad(n, "expected a file or directory path")
		case n.Value == "":
			bad(n, "empty path")
		default:
			p := n.Value
			if !filepath.IsAbs(p) {
				p = filepath.Join(filepath.Dir(file), p)
			}
			out = append(out, p)
		}
	}
	return out, errs
}

// inDir resolves p, a path the config file gives, against the file's
// directory; "" stays "".
func inDir(file, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(file), p)
}
