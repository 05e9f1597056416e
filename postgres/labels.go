package postgres

import (
	"context"
	"time"

	"github.com/wardenhq/warden/internal/tracesql"
	"github.com/wardenhq/warden/labels"

	"github.com/jackc/pgx/v5"
)

// Session labels (docs/policies.md) live in session_labels, one row per
// (tenant, session, label); this file moves them for labels.Rules. An Add
// is one transaction holding the session's advisory lock (lockLabels), so
// replicas adding labels to one session take turns: each sees the other's
// labels, and labels.MaxPerSession holds fleet-wide. Labels are read at
// every step, and what another replica added must count at the next: the
// reads asked together share one query (labels.Batch), each as fresh as
// its own would be.

var _ labels.Store = (*Store)(nil)

// labelRows are a Store's label rows.
type labelRows Store

// labelRules is the labels.Store a Store embeds (newLabels).
type labelRules = labels.Rules

func newLabels(s *Store) labelRules { return labels.Rules{Rows: (*labelRows)(s)} }

func (r *labelRows) Add(ctx context.Context, tenant, session string, at time.Time, fn func([]string) ([]string, error)) error {
	s := (*Store)(r)
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	const what = "add session labels"
	return s.stateTx(ctx, what, func(tx pgx.Tx) error {
		var have []string
		var rows pgx.Rows
		err := xactLock(ctx, tx, lockLabels, tenant+"/"+session)
		if err == nil {
			rows, err = tx.Query(ctx, tracesql.LabelsGet, pgArgs(tenant, session)...)
		}
		if err == nil {
			have, err = pgx.CollectRows(rows, pgx.RowTo[string])
		}
		if err != nil {
			return stateErr(ctx, what, err)
		}
		add, err := fn(have)
		if err != nil || len(add) == 0 {
			return err
		}
		b := &pgx.Batch{}
		for _, l := range add {
			b.Queue(tracesql.LabelsAdd, pgArgs(tenant, session, l, toUS(at))...)
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return stateErr(ctx, what, err)
		}
		return nil
	})
}

// labelReader groups a Store's label reads.
type labelReader = labels.Batch

func (r *labelRows) Labels(ctx context.Context, tenant, session string) ([]string, error) {
	s, a := (*Store)(r), pgArgs(tenant, session)
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	ls, err := s.labels.Read(ctx, labels.Key{Tenant: a[0].(string), Session: a[1].(string)}, s.readLabels)
	if err != nil {
		return nil, stateErr(ctx, "read session labels", err)
	}
	return ls, nil
}

// readLabels reads the labels of sessions ks (their keys mapped by pgArgs)
// with one query, bounded by stateCtx.
func (s *Store) readLabels(ctx context.Context, ks []labels.Key) (map[labels.Key][]string, error) {
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	tenants, sessions := make([]string, len(ks)), make([]string, len(ks))
	for i, k := range ks {
		tenants[i], sessions[i] = k.Tenant, k.Session
	}
	rows, err := s.statePool().Query(ctx, `SELECT l.tenant, l.session, l.label
		FROM unnest($1::text[], $2::text[]) AS k(tenant, session)
		JOIN session_labels l ON l.tenant = k.tenant AND l.session = k.session`, tenants, sessions)
	got := map[labels.Key][]string{}
	if err == nil {
		var k labels.Key
		var l string
		_, err = pgx.ForEachRow(rows, []any{&k.Tenant, &k.Session, &l}, func() error {
			got[k] = append(got[k], l)
			return nil
		})
	}
	return got, err
}
