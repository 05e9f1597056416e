package guardian

import (
	"fmt"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/agbom"
)

// withAgBOM adds the AgBOM observer (agbom/snapshot and agbom/changed
// steps update the agent's AgBOM) to obs when the store keeps AgBOMs.
func (g *Guardian) withAgBOM(obs warden.Observer) warden.Observer {
	bs, ok := g.store.(warden.AgBOMStore)
	if !ok {
		return obs
	}
	o := &agbom.Observer{Store: bs, Logf: func(format string, a ...any) { g.log.Warn(fmt.Sprintf(format, a...)) }}
	if obs == nil {
		return o
	}
	return warden.Observers{obs, o}
}

// AgBOMStore is the store's AgBOM and tool pins; nil when the store keeps
// none.
func (g *Guardian) AgBOMStore() warden.AgBOMStore {
	bs, _ := g.store.(warden.AgBOMStore)
	return bs
}
