package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/wardenhq/warden/labels"

	"github.com/jackc/pgx/v5"
)

// Session labels (labels.Store, CONTRACT §15) live in session_labels,
// one row per (tenant, session, label). AddSessionLabels is one transaction
// holding the session's advisory lock (lockLabels), so replicas adding
// labels to one session at once are applied one after the other: each sees
// the other's labels, the union is kept, and labels.MaxPerSession holds
// fleet-wide. SessionLabels is one read, shared by the reads asked at
// the same time (labelread.go).

var _ labels.Store = (*Store)(nil)

// SessionLabels returns the session's labels, sorted; nil for none.
func (s *Store) SessionLabels(ctx context.Context, tenant, session string) ([]string, error) {
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	out, err := s.readLabels(ctx, tenant, session)
	if err != nil {
		return nil, stateErr(ctx, "read session labels", err)
	}
	return out, nil
}

func sessionLabels(ctx context.Context, q querier, tenant, session string) ([]string, error) {
	rows, err := q.Query(ctx, `SELECT label FROM session_labels WHERE tenant = $1 AND session = $2 ORDER BY label`, pgArgs(tenant, session)...)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if len(out) == 0 {
		out = nil
	}
	return out, err
}

// AddSessionLabels adds labels to the session in one transaction and
// returns its labels after it, sorted. Invalid labels, and more than
// labels.MaxPerSession in all (labels.ErrTooMany), write nothing.
func (s *Store) AddSessionLabels(ctx context.Context, tenant, session string, add []string, at time.Time) ([]string, error) {
	if session == "" {
		return nil, fmt.Errorf("postgres: session add need a session id")
	}
	for _, l := range add {
		if err := labels.Valid(l); err != nil {
			return nil, fmt.Errorf("postgres: %w", err)
		}
	}
	ctx, cancel := s.stateCtx(ctx)
	defer cancel()
	const what = "add session add"
	var out []string
	err := s.stateTx(ctx, what, func(tx pgx.Tx) error {
		if err := xactLock(ctx, tx, lockLabels, tenant+"/"+session); err != nil {
			return stateErr(ctx, what, err)
		}
		have, err := sessionLabels(ctx, tx, tenant, session)
		if err != nil {
			return stateErr(ctx, what, err)
		}
		out = labels.Merge(have, add)
		if len(out) > labels.MaxPerSession {
			return labels.ErrTooMany
		}
		var add []string
		for _, l := range out {
			if _, ok := slices.BinarySearch(have, l); !ok {
				add = append(add, l)
			}
		}
		if len(add) == 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, `INSERT INTO session_labels (tenant, session, label, added)
			SELECT $1, $2, l, $3 FROM unnest($4::text[]) AS l
			ON CONFLICT DO NOTHING`, pgArgs(tenant, session, toUS(at), add)...); err != nil {
			return stateErr(ctx, what, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
