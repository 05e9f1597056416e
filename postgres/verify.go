package postgres

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/wardenhq/warden/internal/tracehash"
	"github.com/wardenhq/warden/internal/tracesql"
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
	// BrokenMarker: the chain marker does not hold under the chain key
	// given (another key, a changed marker, or none at all).
	BrokenMarker = "marker"
	// BrokenApproval: an approval's state, approver or use is not what the
	// trace's records say.
	BrokenApproval = "approval"
)

// Broken is the first broken link Verify found.
type Broken struct {
	Position int64  `json:"position"` // 1-based, among the rows in seq order
	Seq      int64  `json:"seq"`
	ID       string `json:"id"`
	Reason   string `json:"reason"`
	Detail   string `json:"detail"`
}

// VerifyReport is what Verify found (the SQLite store's fields, without
// its legacy rows and checkpoints: every PostgreSQL record is hashed, and
// nothing is pruned).
type VerifyReport struct {
	Verified int64 `json:"verified"` // rows whose links hold (up to the break)
	tracesql.KeyedCounts
	Head   string  `json:"head"` // the newest row's hash when the chain holds
	Broken *Broken `json:"broken,omitempty"`
}

// OK reports whether the whole chain holds.
func (r *VerifyReport) OK() bool { return r.Broken == nil }

// VerifyOptions say which chain key Verify checks with: Key; else
// KeyFile's; else the store's own (a store open for writing); else
// tracehash.DefaultKeyFile's when that file exists. NoKey checks without
// one (the keyed records' linkage only).
type VerifyOptions struct {
	Key     []byte
	KeyFile string
	NoKey   bool
}

// verifyKey is the chain key o says to verify with (nil: none).
func (s *Store) verifyKey(o VerifyOptions) ([]byte, error) {
	return tracehash.VerifyKey(o.NoKey, o.Key, o.KeyFile, s.chainKey)
}

// Verify walks the trace in seq order recomputing each row's hash
// (internal/tracehash) and checking that it names the previous row's hash,
// in one snapshot (a read-only REPEATABLE READ transaction) read as one
// streaming query: memory is one row, however long the trace (and the
// records that name an approval, which it checks the approvals table
// against), and writers go on meanwhile. A broken link is reported in the
// VerifyReport; the error is for a trace it could not read.
//
// The chain cannot show that the newest records were deleted: compare the
// reported head with one seen earlier (or published) for that.
func (s *Store) Verify(ctx context.Context) (*VerifyReport, error) {
	return s.VerifyWith(ctx, VerifyOptions{})
}

// VerifyWith is Verify with o's chain key.
func (s *Store) VerifyWith(ctx context.Context, o VerifyOptions) (*VerifyReport, error) {
	key, err := s.verifyKey(o)
	if err != nil {
		return nil, fmt.Errorf("postgres: verify: %w", err)
	}
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: verify: %w", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // read only
	rep := &VerifyReport{}
	marker, err := readMarker(ctx, tx, false)
	if err != nil {
		return nil, fmt.Errorf("postgres: verify: %w", err)
	}
	markerBroken := func(detail string) (*VerifyReport, error) {
		rep.Broken = &Broken{Reason: BrokenMarker, Detail: detail}
		return rep, nil
	}
	if marker != nil {
		rep.ChainKey = marker.KeyID
	}
	keyed, why := tracehash.OpenMarker(marker, key)
	if why != "" {
		return markerBroken(why)
	}
	rep.KeyChecked = keyed != nil
	// Rows after the anchor's seq are keyed; with no marker at all every
	// row is checked as from before the key (v1).
	anchor := int64(math.MaxInt64)
	if marker != nil {
		anchor = marker.AnchorPos
	}
	rows, err := tx.Query(ctx, strings.Replace(scanCols, " FROM runs", ", shadow FROM runs", 1)+` ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("postgres: verify: %w", err)
	}
	defer rows.Close()
	c := tracehash.NewCanon()
	var (
		w         row
		shadow    string
		prev      []byte
		pos       int64
		content   [tracehash.Size]byte
		sum       [tracehash.Size]byte
		sawAnchor = marker == nil || marker.AnchorPos == 0
		appr      tracesql.Approvals
	)
	for rows.Next() {
		w = row{}
		if err := rows.Scan(append(w.dest(), &shadow)...); err != nil {
			return nil, readErr(ctx, "verify: read run", err)
		}
		pos++
		r := &w.rec
		broken := func(reason, detail string) (*VerifyReport, error) {
			rep.Broken = &Broken{Position: pos, Seq: w.seq, ID: r.ID, Reason: reason, Detail: detail}
			return rep, nil
		}
		ph := w.prevHash
		if len(ph) != 0 && len(ph) != tracehash.Size {
			return broken(BrokenEdited, fmt.Sprintf("its prev_hash is %d bytes, not a SHA-256 hash", len(ph)))
		}
		after := w.seq > anchor
		if after && !sawAnchor {
			return markerBroken(fmt.Sprintf("the record the chain key starts after (seq %d) is not in the trace: it was changed or deleted", anchor))
		}
		if after && keyed == nil {
			if len(w.hash) != tracehash.Size {
				return broken(BrokenEdited, fmt.Sprintf("its hash is %d bytes, not a keyed hash", len(w.hash)))
			}
			copy(sum[:], w.hash)
		} else {
			rc := &tracehash.Row{
				ID: r.ID, TimeUS: w.us, Event: r.Event, Surface: r.Surface, Direction: r.Direction,
				RequestID: r.RequestID, AgentID: r.AgentID, SessionID: r.SessionID,
				TurnID: r.TurnID, StepID: r.StepID, Decision: r.Decision, Reason: r.Reason,
				ReasonCodes: w.codes, PolicyID: r.PolicyID, PolicyVersion: r.PolicyVersion,
				LatencyUS: r.LatencyUS, Results: w.results, Input: w.in, Output: w.out,
				PolicyRevision: r.PolicyRevision, Views: w.vws, Caller: r.Caller,
				Tenant: r.Tenant, ApprovalID: r.ApprovalID, Tool: r.Tool, Shadow: shadow,
				Sealed: w.sealed,
			}
			if after {
				c.DigestV2(rc, &content)
				sum = keyed.Chain(&content, ph)
			} else {
				// v1 does not cover sealed values, and no record had any
				// before the chain key.
				if len(w.sealed) > 0 {
					return broken(BrokenEdited, "it is from before the chain key, but it has sealed values, which records got only later: they were added")
				}
				c.Digest(rc, &content)
				sum = tracehash.Chain(&content, ph)
			}
			if !bytes.Equal(sum[:], w.hash) {
				if after {
					return broken(BrokenEdited, "its stored hash is not the keyed hash of its content and prev_hash: the record was changed (or rehashed without the chain key)")
				}
				return broken(BrokenEdited, "its stored hash is not the hash of its content and prev_hash: the record was changed")
			}
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
		if marker != nil && w.seq == anchor {
			if !bytes.Equal(sum[:], marker.AnchorHash) {
				return markerBroken(fmt.Sprintf("the record the chain key starts after (seq %d) is not the one the marker names: it was changed", anchor))
			}
			sawAnchor = true
		}
		prev = append(prev[:0], sum[:]...)
		rep.Verified++
		if after {
			rep.Keyed++
		} else {
			rep.BeforeKey++
		}
		if r.ApprovalID != "" {
			appr.Add(r.ApprovalID, tracesql.ApprovalRecord{ID: r.ID, Surface: r.Surface,
				Decision: r.Decision, Caller: r.Caller, Codes: w.codes})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, readErr(ctx, "verify: read runs", err)
	}
	rows.Close()
	if !sawAnchor {
		return markerBroken(fmt.Sprintf("the record the chain key starts after (seq %d) is not in the trace: it was changed or deleted", anchor))
	}
	arows, err := tx.Query(ctx, `SELECT id, state, decided_by, record_id, decision_record_id,
		used_record_id, hold, used_at FROM approvals ORDER BY created, id`)
	if err != nil {
		return nil, fmt.Errorf("postgres: verify: read approvals: %w", err)
	}
	defer arows.Close()
	for arows.Next() {
		var a tracesql.ApprovalRow
		if err := arows.Scan(&a.ID, &a.State, &a.DecidedBy, &a.RecordID, &a.DecisionRecordID,
			&a.UsedRecordID, &a.Hold, &a.UsedAt); err != nil {
			return nil, fmt.Errorf("postgres: verify: read approval: %w", err)
		}
		if why := appr.Check(a); why != "" {
			rep.Broken = &Broken{ID: a.ID, Reason: BrokenApproval, Detail: why}
			return rep, nil
		}
	}
	if err := arows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: verify: read approvals: %w", err)
	}
	rep.Approvals, rep.ApprovalsUnchecked = appr.Checked, appr.Unchecked
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
