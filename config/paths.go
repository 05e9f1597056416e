package config

import (
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/wardenhq/warden/conf"
)

// decodePaths decodes a list of policy files or directories — `policies:`,
// `shadow:` — into the field field returns: one path or a list of them,
// none when nothing follows the key; each error is at the line of the
// entry at fault. Relative paths are resolved against the config file's
// directory.
func decodePaths(field func(c *Config) *[]string) func(file, key string, v *yaml.Node, c *Config) ErrorList {
	return func(file, key string, v *yaml.Node, c *Config) ErrorList {
		if v.Kind == yaml.AliasNode {
			v = v.Alias
		}
		items := v
		switch {
		case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
			return nil // `shadow:` with nothing after it: none
		case v.Kind == yaml.ScalarNode:
			items = &yaml.Node{Kind: yaml.SequenceNode, Line: v.Line, Column: v.Column, Content: []*yaml.Node{v}}
		}
		dst := field(c)
		errs := conf.Decode(file, key, items, dst)
		if len(errs) > 0 {
			return errs
		}
		for i, p := range *dst {
			if n := items.Content[i]; n.Tag == "!!null" {
				errs.Add(file, n.Line, n.Column, "%s[%d]: expected a file or directory path", key, i)
			} else if p == "" {
				errs.Add(file, n.Line, n.Column, "%s[%d]: empty path", key, i)
			}
			(*dst)[i] = inDir(file, p)
		}
		return errs
	}
}

// inDir resolves p, a path the config file gives, against the file's
// directory; "" stays "".
func inDir(file, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(file), p)
}
