package guardian

import (
	"context"
	"time"

	"github.com/wardenhq/warden/backend"
	"github.com/wardenhq/warden/labels"
)

// newLabels returns the cache of the sessions' labels every policy set's
// Decider shares (a session is keyed by its tenant, so tenants never see
// each other's labels): in front of the backend when it keeps labels
// (SQLite does: they survive a restart), else in memory alone — `warden
// eval`, `warden test`, a Guardian without a trace — where they last as
// long as the Guardian, within the cache's bound.
func newLabels(b *backend.Backend) *labels.Cache {
	ls := b.Labels
	if ls == nil {
		// Nothing else writes them: no entry needs reading again.
		return labels.NewCache(nil, labels.DefaultCacheSize, -1)
	}
	if b.Shared {
		// Replicas share the labels: a label another replica added a
		// moment ago must count at this replica's next step (a lethal
		// trifecta whose steps land on different replicas), so every
		// step reads the session's labels from the shared store (one
		// primary-key read); the cache keeps only this replica's writes
		// merged in.
		return labels.NewCache(ls, labels.DefaultCacheSize, fleetLabelTTL)
	}
	return labels.NewCache(ls, labels.DefaultCacheSize, labels.DefaultCacheTTL)
}

// fleetLabelTTL is the label cache's TTL over a store replicas share: so
// short that every read goes to the store.
const fleetLabelTTL = time.Nanosecond

// SessionLabels returns the labels of a session of tenant ("" for none),
// sorted: what its policies read as session.labels at its next step.
func (g *Guardian) SessionLabels(ctx context.Context, tenant, session string) ([]string, error) {
	return g.labels.Labels(ctx, tenant, session)
}
