package guardian

import (
	"fmt"

	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden/agbom"
)

// withAgBOM adds the AgBOM observer (agbom/snapshot and agbom/changed
// steps update the agent's AgBOM) to obs when the backend keeps AgBOMs.
func (g *Guardian) withAgBOM(obs pipeline.Observer) pipeline.Observer {
	bs := g.backend.AgBOM
	if bs == nil {
		return obs
	}
	o := &agbom.Observer{Store: bs, Logf: func(format string, a ...any) { g.log.Warn(fmt.Sprintf(format, a...)) }}
	if obs == nil {
		return o
	}
	return pipeline.Observers{obs, o}
}

// AgBOMStore is the backend's AgBOM and tool pins; nil when it keeps
// none.
func (g *Guardian) AgBOMStore() agbom.Store { return g.backend.AgBOM }
