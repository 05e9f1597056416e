package postgres

import (
	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/internal/tracesql"
)

// Approvals (approval.Rules over tracesql.ApprovalRows) live in the
// approvals table. A second replica deciding an approval waits for the
// first one's row lock, then finds it no longer pending. A new approval, a
// decision and an expiry notify the other replicas in the transaction that
// makes them (notify.go): delivered when, and only if, it commits.

// approvals is the approval.ApprovalStore a Store embeds (newApprovals).
type approvals = approval.Rules

func newApprovals(s *Store) approvals {
	return approval.NewRules(tracesql.ApprovalRows{DB: rowDB{s: s}, WriteErr: s.writable, Announce: s.notifyApprovals})
}
