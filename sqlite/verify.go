package sqlite

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/internal/tracehash"
	"github.com/wardenhq/warden/internal/tracesql"
	"github.com/wardenhq/warden/sigkey"
)

// Reasons a link of the chain is broken (Broken.Reason).
const (
	// BrokenEdited: the row's stored hash is not the hash of its content
	// and prev_hash (a field, a blob byte or the hash itself was changed).
	BrokenEdited = "edited"
	// BrokenMissing: the row is intact but its predecessor is in no row:
	// records were deleted (without a checkpoint) before it.
	BrokenMissing = "missing"
	// BrokenReordered: the row is intact and its predecessor is in the
	// trace, but not just before it: rows were moved or swapped.
	BrokenReordered = "reordered"
	// BrokenCheckpoint: the newest checkpoint's signature does not verify
	// (it was forged or changed), or it was not signed by this data
	// directory's key.
	BrokenCheckpoint = "checkpoint"
	// BrokenMarker: the trace's chain marker does not hold under the
	// chain key given (another key, a changed marker, or none at all).
	BrokenMarker = "marker"
	// BrokenApproval: an approval's state, approver or use in the
	// approvals table is not what the trace's records say.
	BrokenApproval = "approval"
)

// Broken is the first broken link Verify found.
type Broken struct {
	Position int64  `json:"position"` // 1-based, among the rows in rowid order (0: the checkpoint)
	RowID    int64  `json:"rowid"`
	ID       string `json:"id"`
	Reason   string `json:"reason"`
	Detail   string `json:"detail"`
}

// Checkpoint is a signed record of the chain where retention cut it: the
// hash of the last record deleted, which the oldest remaining record names
// as its prev_hash.
type Checkpoint struct {
	Time      int64  `json:"time_us"`
	LastRowID int64  `json:"last_rowid"`
	LastID    string `json:"last_id"`
	LastHash  string `json:"last_hash"`
	Deleted   int64  `json:"deleted"`
	// Algorithm is the signature's: "ed25519" (older checkpoints and the
	// data directory's key), "ml-dsa-65" or "slh-dsa-128s"
	// (Retention.SigningKey). PublicKey and Signature are hex.
	Algorithm string `json:"algorithm"`
	PublicKey string `json:"public_key"`
	Signature string `json:"signature"`
}

// VerifyReport is what Verify found.
type VerifyReport struct {
	Verified int64 `json:"verified"` // hashed rows whose links hold (up to the break)
	Legacy   int64 `json:"legacy"`   // rows from before the chain (no hash), skipped
	tracesql.KeyedCounts
	Head       string      `json:"head"` // the newest row's hash when the chain holds
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
	Broken     *Broken     `json:"broken,omitempty"`
}

// OK reports whether the whole chain holds.
func (r *VerifyReport) OK() bool { return r.Broken == nil }

const verifySQL = `SELECT rowid, id, time, event, surface, direction, request_id,
	agent_id, session_id, turn_id, step_id, decision, reason, reason_codes,
	policy_id, policy_version, latency_us, blob_off, results_len, input_len,
	output_len, policy_revision, views_len, caller, tenant, approval_id, tool,
	shadow, prev_hash, hash, sealed FROM runs ORDER BY rowid`

// VerifyOptions say what Verify checks with.
type VerifyOptions struct {
	// Key is the chain key (internal/tracehash); when nil, KeyFile's, else
	// the store's own (Open's), else tracehash.DefaultKeyFile's when that
	// file exists. NoKey checks without a key: the keyed records' linkage
	// only.
	Key     []byte
	KeyFile string
	NoKey   bool
	// Pub, when not nil, is the key the newest checkpoint must be signed
	// by, of any algorithm (VerifyWithPublicKey).
	Pub *sigkey.PublicKey
}

// Verify walks the trace in insertion order recomputing each row's hash
// (hash.go) and checking that it names the previous row's hash, starting
// from the newest checkpoint (whose signature it checks) or from the first
// hashed row, with the chain key the store has (VerifyOptions). It reads
// one snapshot in one streaming query: memory is one row and its blob,
// however long the trace (and the records that name an approval, which it
// checks the approvals table against). A broken link is reported in the
// VerifyReport; the error is for a trace it could not read.
//
// The chain cannot show that the newest records were deleted: compare the
// reported head with one seen earlier (or published) for that.
func (s *Store) Verify(ctx context.Context) (*VerifyReport, error) {
	return s.VerifyWith(ctx, VerifyOptions{})
}

// VerifyWithKey is Verify with the checkpoint's expected signer: when pub
// is not nil, the newest checkpoint must be signed by it (an auditor who
// keeps the public key apart from the data directory; `warden verify
// --pubkey`), whatever key the directory holds.
func (s *Store) VerifyWithKey(ctx context.Context, pub ed25519.PublicKey) (*VerifyReport, error) {
	var want *sigkey.PublicKey
	if pub != nil {
		k, err := sigkey.NewPublicKey(sigkey.Ed25519, pub)
		if err != nil {
			return nil, fmt.Errorf("sqlite: verify: %w", err)
		}
		want = k
	}
	return s.VerifyWithPublicKey(ctx, want)
}

// VerifyWithPublicKey is Verify with the checkpoint's expected signer, of
// any algorithm (an Ed25519 key, or the ML-DSA-65 / SLH-DSA-128s key of
// acs.signing_key as `warden keys new` wrote its .pub): when want is not
// nil, the newest checkpoint must be signed by it.
func (s *Store) VerifyWithPublicKey(ctx context.Context, want *sigkey.PublicKey) (*VerifyReport, error) {
	return s.VerifyWith(ctx, VerifyOptions{Pub: want})
}

// verifyKey is the chain key o says to verify with (nil: none).
func (s *Store) verifyKey(o VerifyOptions) ([]byte, error) {
	return tracehash.VerifyKey(o.NoKey, o.Key, o.KeyFile, s.chainKey)
}

// VerifyWith is Verify with o's chain key and checkpoint signer.
func (s *Store) VerifyWith(ctx context.Context, o VerifyOptions) (*VerifyReport, error) {
	key, err := s.verifyKey(o)
	if err != nil {
		return nil, fmt.Errorf("sqlite: verify: %w", err)
	}
	if err := s.caughtUp(ctx); err != nil {
		return nil, fmt.Errorf("sqlite: verify: %w", err)
	}
	conn, err := s.rdb.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: verify: %w", err)
	}
	defer conn.Close()
	// One read transaction: the checkpoint and the rows are one snapshot,
	// even while a server writes and prunes.
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return nil, fmt.Errorf("sqlite: verify: %w", err)
	}
	defer conn.ExecContext(context.Background(), "ROLLBACK") //nolint:errcheck // read only

	rep := &VerifyReport{}
	var prev []byte // the expected prev_hash of the next hashed row
	cp, err := newestCheckpoint(ctx, conn)
	if err != nil {
		return nil, err
	}
	if cp != nil {
		rep.Checkpoint = cp
		if why := s.checkCheckpoint(cp, o.Pub); why != "" {
			rep.Broken = &Broken{RowID: cp.LastRowID, ID: cp.LastID, Reason: BrokenCheckpoint, Detail: why}
			return rep, nil
		}
		prev, _ = decodeHash(cp.LastHash)
	}
	marker, err := readMarker(ctx, conn)
	if err != nil {
		return nil, err
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
	// after: the rows walked now are keyed (after the marker's anchor).
	after := false
	if marker != nil {
		anchor := hex.EncodeToString(marker.AnchorHash)
		switch {
		case len(marker.AnchorHash) == 0:
			after = true // keyed from the first hashed row
		case cp != nil && cp.LastHash == anchor:
			after = true
		default:
			var h []byte
			err := conn.QueryRowContext(ctx, `SELECT hash FROM runs WHERE rowid = ?`, marker.AnchorPos).Scan(&h)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return nil, fmt.Errorf("sqlite: verify: %w", err)
			}
			switch {
			case err == nil && bytes.Equal(h, marker.AnchorHash):
				// walked up to it, then keyed
			case cp != nil:
				after = true // retention deleted it: every row left is keyed
			default:
				return markerBroken(fmt.Sprintf("the record the chain key starts after (rowid %d, hash %s) is not in the trace: it was changed or deleted", marker.AnchorPos, anchor))
			}
		}
	}

	rows, err := conn.QueryContext(ctx, verifySQL)
	if err != nil {
		return nil, fmt.Errorf("sqlite: verify: %w", err)
	}
	defer rows.Close()
	c := newCanon()
	var (
		w       row
		shadow  string
		ph, h   []byte
		sealed  sql.RawBytes // valid until the next row: hashed, not kept
		blob    []byte
		pos     int64
		chained = cp != nil && cp.LastHash != "" // a hashed row has been seen (or deleted)
		content [sha256.Size]byte
		sum     [sha256.Size]byte
		appr    tracesql.Approvals
	)
	for rows.Next() {
		r := &w.rec
		if err := rows.Scan(&w.rowid, &r.ID, &w.us, &r.Event, &r.Surface, &r.Direction,
			&r.RequestID, &r.AgentID, &r.SessionID, &r.TurnID, &r.StepID,
			&r.Decision, &r.Reason, &w.codes, &r.PolicyID, &r.PolicyVersion,
			&r.LatencyUS, &w.off, &w.nRes, &w.nIn, &w.nOut, &r.PolicyRevision, &w.nVws,
			&r.Caller, &r.Tenant, &r.ApprovalID, &r.Tool, &shadow, &ph, &h, &sealed); err != nil {
			return nil, s.readErr(ctx, "verify: read run", err)
		}
		pos++
		broken := func(reason, detail string) (*VerifyReport, error) {
			rep.Broken = &Broken{Position: pos, RowID: w.rowid, ID: r.ID, Reason: reason, Detail: detail}
			rep.Head = ""
			return rep, nil
		}
		if !chained && len(h) == 0 && len(ph) == 0 {
			if len(sealed) > 0 {
				return broken(BrokenEdited, "it has no hash, so it is from before the hash chain, but it has sealed values, which records got only later: they were added")
			}
			if marker != nil && rep.Legacy >= marker.Legacy {
				return broken(BrokenEdited, fmt.Sprintf("it has no hash, but the trace's chain marker says the trace starts with %d records from before the hash chain: its hashes were removed", marker.Legacy))
			}
			rep.Legacy++
			continue
		}
		chained = true
		if len(ph) != 0 && len(ph) != sha256.Size {
			return broken(BrokenEdited, fmt.Sprintf("its prev_hash is %d bytes, not a SHA-256 hash", len(ph)))
		}
		if after && keyed == nil {
			// Without the key a keyed row's hash cannot be recomputed:
			// its linkage alone is checked.
			if len(h) != sha256.Size {
				return broken(BrokenEdited, fmt.Sprintf("its hash is %d bytes, not a keyed hash", len(h)))
			}
			copy(sum[:], h)
		} else {
			n := w.nRes + w.nIn + w.nOut + w.nVws
			if int64(cap(blob)) < n {
				blob = make([]byte, n)
			}
			blob = blob[:n]
			if n > 0 {
				if err := s.rblobs.readAt(blob, w.off); err != nil {
					return broken(BrokenEdited, fmt.Sprintf("its blob cannot be read: %v", err))
				}
			}
			i, o, v := w.nRes, w.nRes+w.nIn, w.nRes+w.nIn+w.nOut
			rc := &rowContent{
				ID: r.ID, TimeUS: w.us, Event: r.Event, Surface: r.Surface, Direction: r.Direction,
				RequestID: r.RequestID, AgentID: r.AgentID, SessionID: r.SessionID,
				TurnID: r.TurnID, StepID: r.StepID, Decision: r.Decision, Reason: r.Reason,
				ReasonCodes: w.codes, PolicyID: r.PolicyID, PolicyVersion: r.PolicyVersion,
				LatencyUS: r.LatencyUS, Results: blob[:i], Input: blob[i:o], Output: blob[o:v],
				PolicyRevision: r.PolicyRevision, Views: blob[v:], Caller: r.Caller,
				Tenant: r.Tenant, ApprovalID: r.ApprovalID, Tool: r.Tool, Shadow: shadow,
				Sealed: sealed,
			}
			if after {
				c.DigestV2(rc, &content)
				sum = keyed.Chain(&content, ph)
			} else {
				// v1 does not cover sealed values, and no record had any
				// before the chain key.
				if len(sealed) > 0 {
					return broken(BrokenEdited, "it is from before the chain key, but it has sealed values, which records got only later: they were added")
				}
				c.Digest(rc, &content)
				sum = chainHash(&content, ph)
			}
			if !bytes.Equal(sum[:], h) {
				if after {
					return broken(BrokenEdited, "its stored hash is not the keyed hash of its content and prev_hash: the record was changed (or rehashed without the chain key)")
				}
				return broken(BrokenEdited, "its stored hash is not the hash of its content and prev_hash: the record was changed")
			}
		}
		if !bytes.Equal(ph, prev) {
			at, err := rowWithHash(ctx, conn, ph)
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
				return broken(BrokenReordered, fmt.Sprintf("its predecessor (hash %s) is at rowid %d, not just before it", got, at))
			}
		}
		prev = append(prev[:0], sum[:]...)
		rep.Verified++
		if after {
			rep.Keyed++
		} else {
			rep.BeforeKey++
			if marker != nil && w.rowid == marker.AnchorPos && bytes.Equal(sum[:], marker.AnchorHash) {
				after = true
			}
		}
		if r.ApprovalID != "" {
			appr.Add(r.ApprovalID, tracesql.ApprovalRecord{ID: r.ID, Surface: r.Surface,
				Decision: r.Decision, Caller: r.Caller, Codes: w.codes})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(ctx, "verify: read runs", err)
	}
	rows.Close()
	if b, err := checkApprovals(ctx, conn, &appr); err != nil {
		return nil, err
	} else if b != nil {
		rep.Broken = b
		return rep, nil
	}
	rep.Approvals, rep.ApprovalsUnchecked = appr.Checked, appr.Unchecked
	rep.Head = hex.EncodeToString(prev)
	return rep, nil
}

// checkApprovals checks every approval against the trace's records that
// name it (tracesql.Approvals); the first that does not hold is returned.
func checkApprovals(ctx context.Context, conn *sql.Conn, appr *tracesql.Approvals) (*Broken, error) {
	rows, err := conn.QueryContext(ctx, `SELECT id, state, decided_by, record_id, decision_record_id,
		used_record_id, hold, used_at FROM approvals ORDER BY rowid`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: verify: read approvals: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var a tracesql.ApprovalRow
		if err := rows.Scan(&a.ID, &a.State, &a.DecidedBy, &a.RecordID, &a.DecisionRecordID,
			&a.UsedRecordID, &a.Hold, &a.UsedAt); err != nil {
			return nil, fmt.Errorf("sqlite: verify: read approval: %w", err)
		}
		if why := appr.Check(a); why != "" {
			return &Broken{ID: a.ID, Reason: BrokenApproval, Detail: why}, nil
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: verify: read approvals: %w", err)
	}
	return nil, nil
}

// rowWithHash is the rowid of a row whose hash is h, 0 for none. It scans
// the table (hash has no index): Verify calls it once, on a broken link.
func rowWithHash(ctx context.Context, conn *sql.Conn, h []byte) (int64, error) {
	var at int64
	err := conn.QueryRowContext(ctx, `SELECT rowid FROM runs WHERE hash = ? LIMIT 1`, h).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite: verify: %w", err)
	}
	return at, nil
}

// newestCheckpoint reads the newest checkpoint; nil when there is none.
func newestCheckpoint(ctx context.Context, q queryer) (*Checkpoint, error) {
	var cp Checkpoint
	err := q.QueryRowContext(ctx, `SELECT time, last_rowid, last_id, last_hash, deleted,
		public_key, signature, algorithm FROM trace_checkpoints ORDER BY rowid DESC LIMIT 1`).Scan(
		&cp.Time, &cp.LastRowID, &cp.LastID, &cp.LastHash, &cp.Deleted, &cp.PublicKey, &cp.Signature, &cp.Algorithm)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: read checkpoint: %w", err)
	}
	return &cp, nil
}

// checkCheckpoint returns why cp does not verify, "" when it does: its
// signature must verify under its public key, and that key must be want
// when given, else the data directory's (SignKeyFile) when that file is
// readable.
func (s *Store) checkCheckpoint(cp *Checkpoint, want *sigkey.PublicKey) string {
	alg, err := sigkey.ParseAlg(cp.Algorithm)
	if err != nil {
		return fmt.Sprintf("its algorithm %q is not one warden signs with", cp.Algorithm)
	}
	raw, err := hex.DecodeString(cp.PublicKey)
	if err != nil {
		return "its public key is malformed"
	}
	pub, err := sigkey.NewPublicKey(alg, raw)
	if err != nil {
		return "its public key is malformed: " + err.Error()
	}
	sig, err := hex.DecodeString(cp.Signature)
	if err != nil || !pub.Verify(checkpointMessage(cp), sig) {
		return "its signature does not verify: the checkpoint was forged or changed"
	}
	if want != nil {
		if !want.Equal(pub) {
			return fmt.Sprintf("it is signed by %s key %s, not by the key given (%s key %s)", alg, pub.KeyID(), want.Alg(), want.KeyID())
		}
		return ""
	}
	if own, err := readSignKey(s.dir); err == nil && own != nil && alg == sigkey.Ed25519 {
		if !bytes.Equal(own.Public().(ed25519.PublicKey), raw) {
			return fmt.Sprintf("it is signed by %s, not by this data directory's key (%s)", cp.PublicKey, SignKeyFile)
		}
	}
	return ""
}
