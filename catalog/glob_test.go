package catalog_test

import (
	"testing"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/policy"
)

// catalog.Glob is a copy of policy.Glob: the two must agree.
func TestGlobAgreesWithPolicy(t *testing.T) {
	patterns := []string{"", "*", "?", "steps/*", "tool.*", "*.pre_*", "tasks/*/get", "a?c", "**", "*x*", "é?", "message/s*"}
	subjects := []string{"", "a", "abc", "steps/toolCallRequest", "tool.pre_call", "session.pre_create",
		"tasks/pushNotificationConfig/get", "é!", "message/send", "xx"}
	for _, p := range patterns {
		for _, s := range subjects {
			if a, b := catalog.Glob(p, s), policy.Glob(p, s); a != b {
				t.Errorf("Glob(%q, %q): catalog %v, policy %v", p, s, a, b)
			}
		}
	}
	for _, e := range catalog.All() {
		if !catalog.Glob(e.Name, e.Name) {
			t.Errorf("%s does not match itself", e.Name)
		}
	}
}
