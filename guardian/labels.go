package guardian

import (
	"context"

	"github.com/wardenhq/warden"
)

// newLabels returns the cache of the sessions' labels every policy set's
// Decider shares (a session is keyed by its tenant, so tenants never see
// each other's labels): in front of the trace store when it keeps labels
// (SQLite does: they survive a restart), else in memory alone — `warden
// eval`, `warden test`, a Guardian without a trace — where they last as
// long as the Guardian, within the cache's bound.
func newLabels(store warden.Store) *warden.LabelCache {
	ls, _ := store.(warden.LabelStore)
	if ls == nil {
		// Nothing else writes them: no entry needs reading again.
		return warden.NewLabelCache(nil, warden.DefaultLabelCacheSize, -1)
	}
	return warden.NewLabelCache(ls, warden.DefaultLabelCacheSize, warden.DefaultLabelCacheTTL)
}

// SessionLabels returns the labels of a session of tenant ("" for none),
// sorted: what its policies read as session.labels at its next step.
func (g *Guardian) SessionLabels(ctx context.Context, tenant, session string) ([]string, error) {
	return g.labels.Labels(ctx, tenant, session)
}
