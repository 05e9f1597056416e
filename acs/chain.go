package acs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/acsstate"

	"github.com/google/uuid"
)

// entryTimeLayout is how a ContextEntry's timestamp is written, hashed
// and kept: UTC, milliseconds, so the stored entry re-hashes the same.
const entryTimeLayout = "2006-01-02T15:04:05.000Z"

// maxAppendTries bounds the compare-and-set retries of one append when
// other requests of the session (on this or another replica) append first.
const maxAppendTries = 64

// EntryObject is the ContextEntry as ACS §8.1 shapes it on the wire and for
// hashing: entry_id, step_id, step_type, request_hash, timestamp,
// decision, and previous_hash (absent for a session's first entry) and
// entry_hash.
func EntryObject(e *acsstate.Entry) map[string]any {
	m := map[string]any{
		"entry_id": e.EntryID, "step_id": e.StepID, "step_type": e.StepType,
		"timestamp": e.Timestamp.UTC().Format(entryTimeLayout), "decision": e.Decision,
	}
	if e.RequestHash != "" {
		m["request_hash"] = e.RequestHash
	}
	if e.PreviousHash != "" {
		m["previous_hash"] = e.PreviousHash
	}
	if e.EntryHash != "" {
		m["entry_hash"] = e.EntryHash
	}
	return m
}

// EntryHash computes entry_hash per ACS §8.2: lowercase hex SHA-256 of the
// JCS form of the entry without entry_hash and previous_hash, followed by
// the 32 raw bytes of previous_hash (nothing for the first entry).
func EntryHash(e *acsstate.Entry) (string, error) {
	m := EntryObject(e)
	delete(m, "entry_hash")
	delete(m, "previous_hash")
	b, err := Canonical(m)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write(b)
	if e.PreviousHash != "" {
		prev, err := hex.DecodeString(e.PreviousHash)
		if err != nil || len(prev) != sha256.Size {
			return "", fmt.Errorf("previous_hash %q is not 64 hex digits", e.PreviousHash)
		}
		h.Write(prev)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// VerifyEntries walks a session's chain, oldest first: each entry's
// previous_hash is the entry before's entry_hash and its entry_hash
// re-computes. It returns the head, or the first broken entry.
func VerifyEntries(entries []acsstate.Entry) (string, error) {
	prev := ""
	for i := range entries {
		e := &entries[i]
		if e.PreviousHash != prev {
			return "", fmt.Errorf("entry %d (%s): previous_hash %q, want %q", i, e.EntryID, e.PreviousHash, prev)
		}
		h, err := EntryHash(e)
		if err != nil {
			return "", fmt.Errorf("entry %d (%s): %w", i, e.EntryID, err)
		}
		if h != e.EntryHash {
			return "", fmt.Errorf("entry %d (%s): entry_hash %s does not match its content (%s)", i, e.EntryID, e.EntryHash, h)
		}
		prev = h
	}
	return prev, nil
}

// appendEntry appends the step's ContextEntry to the session's chain on
// head (the head read before deciding), re-reading the head when another
// request appended first, and returns the new head.
func appendEntry(ctx context.Context, st acsstate.Store, r *request, head, decision, recordID string, now time.Time) (string, error) {
	rh, err := RequestHash(r.params)
	if err != nil {
		return "", fmt.Errorf("request_hash: %w", err)
	}
	e := &acsstate.Entry{
		EntryID: uuid.NewString(), StepID: r.requestID, StepType: r.method, RequestHash: rh,
		Timestamp: now.UTC().Truncate(time.Millisecond), Decision: decision, RecordID: recordID,
	}
	for try := range maxAppendTries {
		if try > 0 {
			s, err := st.ACSSession(ctx, r.sessionID)
			if err != nil {
				return "", err
			}
			head = s.Head
		}
		e.PreviousHash = head
		if e.EntryHash, err = EntryHash(e); err != nil {
			return "", err
		}
		err = st.AppendACSEntry(ctx, r.sessionID, head, e)
		if err == nil {
			return e.EntryHash, nil
		}
		if !errors.Is(err, acsstate.ErrChainMoved) {
			return "", err
		}
	}
	return "", fmt.Errorf("the session's chain kept moving: %d appends raced this one", maxAppendTries)
}
