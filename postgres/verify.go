package postgres

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/wardenhq/warden/internal/tracehash"
)

// Reasons a link of the chain is broken (Broken.Reason), as the SQLite
// store's.
const (
	// BrokenEdited: the row's stored hash is not the hash of its content
	// and prev_hash (a field, a blob byte or the hash itself was changed).
	BrokenEdited = "edited"
	// BrokenMissing: the row is intact but its predecessor is in no row:
	// records before it were deleted.
	BrokenMissing = "missing"
	// BrokenReordered: the row is intact and its predecessor is in the
	// trace, but not just before it.
	BrokenReordered = "reordered"
)

// Broken is the first broken link Verify found.
type Broken struct {
	Position int64  `json:"position"` // 1-based, among the rows in seq order
	Seq      int64  `json:"seq"`
	ID       string `json:"id"`
	Reason   string `json:"reason"`
	Detail   string `json:"detail"`
}

// VerifyReport is what Verify found.
type VerifyReport struct {
	Verified int64   `json:"verified"` // rows whose links hold (up to the break)
	Head     string  `json:"head"`     // the newest row's hash when the chain holds
	Broken   *Broken `json:"broken,omitempty"`
}

// OK reports whether the whole chain holds.
func (r *VerifyReport) OK() bool { return r.Broken == nil }

// Verify walks the trace in seq order recomputing each row's hash
// (internal/tracehash) and checking that it names the previous row's hash,
// in one snapshot (a read-only REPEATABLE READ transaction) read as one
// streaming query: memory is one row, however long the trace, and writers
// go on meanwhile. A broken link is reported in the VerifyReport; the error
// is for a trace it could not read.
//
// The chain cannot show that the newest records were deleted: compare the
// reported head with one seen earlier (or published) for that.
func (s *Store) Verify(ctx context.Context) (*VerifyReport, error) {
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: verify: %w", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // read only
	rows, err := tx.Query(ctx, scanCols+` ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("postgres: verify: %w", err)
	}
	defer rows.Close()
	rep := &VerifyReport{}
	c := tracehash.NewCanon()
	var (
		w       row
		prev    []byte
		pos     int64
		content [tracehash.Size]byte
	)
	for rows.Next() {
		w = row{}
		if err := rows.Scan(w.dest()...); err != nil {
			return nil, readErr(ctx, "verify: read run", err)
		}
		pos++
		r := &w.rec
		broken := func(reason, detail string) (*VerifyReport, error) {
			rep.Broken = &Broken{Position: pos, Seq: w.seq, ID: r.ID, Reason: reason, Detail: detail}
			return rep, nil
		}
		c.Digest(&tracehash.Row{
			ID: r.ID, TimeUS: w.us, Event: r.Event, Surface: r.Surface, Direction: r.Direction,
			RequestID: r.RequestID, AgentID: r.AgentID, SessionID: r.SessionID,
			TurnID: r.TurnID, StepID: r.StepID, Decision: r.Decision, Reason: r.Reason,
			ReasonCodes: w.codes, PolicyID: r.PolicyID, PolicyVersion: r.PolicyVersion,
			LatencyUS: r.LatencyUS, Results: w.results, Input: w.in, Output: w.out,
			PolicyRevision: r.PolicyRevision, Views: w.vws, Caller: r.Caller,
			Tenant: r.Tenant, ApprovalID: r.ApprovalID, Tool: r.Tool,
		}, &content)
		ph := w.prevHash
		if len(ph) != 0 && len(ph) != tracehash.Size {
			return broken(BrokenEdited, fmt.Sprintf("its prev_hash is %d bytes, not a SHA-256 hash", len(ph)))
		}
		sum := tracehash.Chain(&content, ph)
		if !bytes.Equal(sum[:], w.hash) {
			return broken(BrokenEdited, "its stored hash is not the hash of its content and prev_hash: the record was changed")
		}
		if !bytes.Equal(ph, prev) {
			rows.Close()
			at, err := seqWithHash(ctx, tx, ph)
			if err != nil {
				return nil, err
			}
			want, got := hex.EncodeToString(prev), hex.EncodeToString(ph)
			switch {
			case len(ph) == 0:
				return broken(BrokenMissing, fmt.Sprintf("it starts a chain, but the previous record's hash is %s", want))
			case at == 0:
				return broken(BrokenMissing, fmt.Sprintf("its predecessor (hash %s) is not in the trace: records before it were deleted", got))
			default:
				return broken(BrokenReordered, fmt.Sprintf("its predecessor (hash %s) is at seq %d, not just before it", got, at))
			}
		}
		prev = append(prev[:0], sum[:]...)
		rep.Verified++
	}
	if err := rows.Err(); err != nil {
		return nil, readErr(ctx, "verify: read runs", err)
	}
	rep.Head = hex.EncodeToString(prev)
	return rep, nil
}

// seqWithHash is the seq of a row whose hash is h, 0 for none. It scans the
// table (hash has no index): Verify calls it once, on a broken link.
func seqWithHash(ctx context.Context, tx pgx.Tx, h []byte) (int64, error) {
	var at int64
	err := tx.QueryRow(ctx, `SELECT seq FROM runs WHERE hash = $1 LIMIT 1`, h).Scan(&at)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("postgres: verify: %w", err)
	}
	return at, nil
}
