package policy

import "github.com/wardenhq/warden/conf"

// Error is one problem found while loading policies, located at the YAML
// line of the offending field; the config reports its problems the same
// way (conf.Error).
type Error = conf.Error

// ErrorList collects every error found while loading a policy set; Load
// returns it (never empty) instead of stopping at the first problem.
type ErrorList = conf.ErrorList
