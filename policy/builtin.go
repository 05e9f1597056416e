package policy

import (
	"embed"
	"sync"
)

//go:embed pack/*.yaml
var packFS embed.FS

var (
	builtinOnce sync.Once
	builtinSet  *Set
	builtinErr  error
)

// Builtin returns the built-in policy pack (policy/pack/*.yaml, embedded),
// which LoadSet puts first unless Spec.Builtin is false. It is compiled once; the Set is
// immutable, so the same value is shared.
func Builtin() (*Set, error) {
	builtinOnce.Do(func() {
		builtinSet, builtinErr = LoadFS(packFS, "pack")
		if builtinErr == nil {
			builtinSet.spec = Spec{Builtin: true}
			for _, p := range builtinSet.policies {
				p.pack = true
			}
		}
	})
	return builtinSet, builtinErr
}

// BuiltinFS returns the embedded pack's files (directory "pack"), e.g. for
// `warden check` to print or for users to copy as a starting point.
func BuiltinFS() embed.FS { return packFS }
