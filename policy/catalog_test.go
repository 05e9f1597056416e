package policy_test

import (
	"testing"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/policy"
)

// TestPackEventsInCatalog: every events entry of the built-in pack names a
// catalog event, so the pack loads under the check the commands apply.
func TestPackEventsInCatalog(t *testing.T) {
	var names []string
	for _, e := range catalog.All() {
		names = append(names, e.Name)
	}
	if _, err := policy.LoadSet(policy.Spec{Builtin: true, Events: names}); err != nil {
		t.Fatal(err)
	}
	pack, err := policy.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pack.Policies() {
		for _, ev := range p.Events {
			if len(catalog.Match(ev)) == 0 {
				t.Errorf("%s:%d: policy %s: event %q is not in the catalog", p.File, p.Line, p.ID, ev)
			}
			if err := policy.CheckEvent(ev, names); err != nil {
				t.Errorf("CheckEvent(%q) = %v, catalog.Match finds it", ev, err)
			}
		}
	}
	if err := policy.CheckEvent("tool.precall", names); err == nil ||
		err.Error() != `"tool.precall" matches no event in the catalog (did you mean "tool.pre_call"?)` {
		t.Errorf("CheckEvent(tool.precall) = %v", err)
	}
}
