package guardian

import (
	"fmt"

	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden/agbom"
)

// withAgBOM adds the AgBOM observer (agbom/snapshot and agbom/changed
// steps update the agent's AgBOM) to obs when the store keeps AgBOMs.
func (g *Guardian) withAgBOM(obs pipeline.Observer) pipeline.Observer {
	bs, ok := g.store.(agbom.Store)
	if !ok {
		return obs
	}
	o := &agbom.Observer{Store: bs, Logf: func(format string, a ...any) { g.log.Warn(fmt.Sprintf(format, a...)) }}
	if obs == nil {
		return o
	}
	return pipeline.Observers{obs, o}
}

// AgBOMStore is the store's AgBOM and tool pins; nil when the store keeps
// none.
func (g *Guardian) AgBOMStore() agbom.Store {
	bs, _ := g.store.(agbom.Store)
	return bs
}
