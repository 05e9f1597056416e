package catalog_test

import (
	"testing"

	"github.com/wardenhq/warden/catalog"
)

// Every catalog name matches itself as a pattern, so a declaration that
// names an event exactly selects it.
func TestEveryNameMatchesItself(t *testing.T) {
	for _, e := range catalog.All() {
		if !catalog.Glob(e.Name, e.Name) {
			t.Errorf("%s does not match itself", e.Name)
		}
	}
}
