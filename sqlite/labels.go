package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/wardenhq/warden/internal/tracesql"
	"github.com/wardenhq/warden/labels"
)

// Session labels (docs/policies.md) live in session_labels (schema 11,
// schema.go), one row per (tenant, session, label); this file moves them
// for labels.Rules. A session gains each label once, so an Add is a plain
// IMMEDIATE transaction on the approvals' connection, not a group commit;
// reads go through the point reads' connections, on a cache miss of the
// labels.Cache in front of the store.

var _ labels.Store = (*Store)(nil)

// labelRows are a Store's label rows.
type labelRows Store

// labelRules is the labels.Store a Store embeds (newLabels).
type labelRules = labels.Rules

func newLabels(s *Store) labelRules { return labels.Rules{Rows: (*labelRows)(s)} }

// labelsOf reads the session's labels with query.
func labelsOf(ctx context.Context, query func(context.Context, string, ...any) (*sql.Rows, error), tenant, session string) ([]string, error) {
	rows, err := query(ctx, tracesql.Numbered(tracesql.LabelsGet), tenant, session)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return tracesql.ScanStrings(rows)
}

func (r *labelRows) Labels(ctx context.Context, tenant, session string) ([]string, error) {
	s := (*Store)(r)
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	ls, err := labelsOf(ctx, s.pointReader().QueryContext, tenant, session)
	if err != nil {
		return nil, s.readErr(ctx, "read session labels", err)
	}
	return ls, nil
}

func (r *labelRows) Add(ctx context.Context, tenant, session string, at time.Time, fn func([]string) ([]string, error)) error {
	s := (*Store)(r)
	const what = "add session labels"
	return s.approvalTx(ctx, what, func(tx *sql.Tx) error {
		have, err := labelsOf(ctx, tx.QueryContext, tenant, session)
		if err != nil {
			return s.approvalErr(ctx, what, err)
		}
		add, err := fn(have)
		if err != nil {
			return err
		}
		for _, l := range add {
			if _, err := tx.ExecContext(ctx, tracesql.Numbered(tracesql.LabelsAdd), tenant, session, l, micro(at)); err != nil {
				return s.approvalErr(ctx, what, err)
			}
		}
		return nil
	})
}
