package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/wardenhq/warden/labels"
)

// Session labels (labels.Store, CONTRACT §15) live in session_labels
// (schema 11, schema.go), one row per (tenant, session, label). They change
// rarely — a session gains each label once — so AddSessionLabels is a plain
// IMMEDIATE transaction on the approvals' connection, durable when it
// returns, not a group commit; SessionLabels reads through the read-only
// connections. The Decider keeps them in a labels.Cache in front of
// the store, so the decision path reads the store only on a cache miss.

var _ labels.Store = (*Store)(nil)

// SessionLabels returns the session's labels, sorted; nil for none.
func (s *Store) SessionLabels(ctx context.Context, tenant, session string) ([]string, error) {
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return nil, ErrClosed
	}
	rows, err := s.pointReader().QueryContext(ctx,
		`SELECT label FROM session_labels WHERE tenant = ? AND session = ? ORDER BY label`, tenant, session)
	if err != nil {
		return nil, s.readErr(ctx, "read session labels", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return nil, s.readErr(ctx, "read session labels", err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(ctx, "read session labels", err)
	}
	return out, nil
}

// AddSessionLabels adds labels to the session in one transaction and
// returns its labels after it, sorted. Invalid labels, and more than
// labels.MaxPerSession in all (labels.ErrTooMany), write nothing.
func (s *Store) AddSessionLabels(ctx context.Context, tenant, session string, add []string, at time.Time) ([]string, error) {
	if session == "" {
		return nil, fmt.Errorf("sqlite: session add need a session id")
	}
	for _, l := range add {
		if err := labels.Valid(l); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
	}
	var out []string
	err := s.approvalTx(ctx, "add session add", func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx,
			`SELECT label FROM session_labels WHERE tenant = ? AND session = ?`, tenant, session)
		if err != nil {
			return s.approvalErr(ctx, "add session add", err)
		}
		var have []string
		for rows.Next() {
			var l string
			if err := rows.Scan(&l); err != nil {
				rows.Close()
				return s.approvalErr(ctx, "add session add", err)
			}
			have = append(have, l)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return s.approvalErr(ctx, "add session add", err)
		}
		out = labels.Merge(have, add)
		if len(out) > labels.MaxPerSession {
			return labels.ErrTooMany
		}
		slices.Sort(have)
		for _, l := range out {
			if _, ok := slices.BinarySearch(have, l); ok {
				continue
			}
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO session_labels (tenant, session, label, added) VALUES (?, ?, ?, ?)`,
				tenant, session, l, micro(at)); err != nil {
				return s.approvalErr(ctx, "add session add", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
