package acsstate

import (
	"context"
	"errors"
	"time"
)

// Session is the state of one ACS session (Agent Control Standard,
// docs/acs.md) that must survive a restart and be shared by every warden
// serving the session: what the handshake negotiated, and the head of its
// audit chain.
type Session struct {
	ID      string `json:"id"`       // metadata.session_id
	AgentID string `json:"agent_id"` // metadata.agent_id at the handshake
	Tenant  string `json:"tenant"`   // the caller's tenant
	// KeyID is the signature key_id the handshake was signed with ("":
	// unsigned); every later request of the session must be signed with it.
	KeyID   string   `json:"key_id"`
	Version string   `json:"version"` // the negotiated acs_version
	Methods []string `json:"methods"` // the methods the ServerHello said it evaluates
	// Profiles are the profiles the ClientHello declared
	// (profiles_supported, e.g. acs-provenance: every data-bearing field
	// of the session's payloads must carry provenance).
	Profiles []string  `json:"profiles,omitempty"`
	Hello    time.Time `json:"hello"` // when the handshake was made
	LastSeen time.Time `json:"last_seen"`
	// Head is the hex entry_hash of the session's newest ContextEntry ("":
	// none yet); Entries is how many the chain holds.
	Head    string `json:"head"`
	Entries int64  `json:"entries"`
	// Ended is set by steps/sessionEnd; an ended session takes no more hooks.
	Ended bool `json:"ended"`
}

// Entry is one ContextEntry of a session's audit chain (ACS §5), as the
// store keeps it.
type Entry struct {
	EntryID      string    `json:"entry_id"`
	StepID       string    `json:"step_id"`   // the request_id of the step
	StepType     string    `json:"step_type"` // the method, e.g. steps/toolCallRequest
	RequestHash  string    `json:"request_hash,omitempty"`
	Timestamp    time.Time `json:"timestamp"`
	PreviousHash string    `json:"previous_hash,omitempty"`
	EntryHash    string    `json:"entry_hash"`
	Decision     string    `json:"decision"`
	RecordID     string    `json:"record_id,omitempty"` // the trace record of the step
}

// Errors of a Store.
var (
	// ErrReplay: the request_id (or nonce) was seen before in its session
	// within the replay window.
	ErrReplay = errors.New("warden: request seen before (replay)")
	// ErrChainMoved: AppendEntry's expected head is no longer the session's
	// head (another request, or another replica, appended first).
	ErrChainMoved = errors.New("warden: the session's chain head moved")
	// ErrNoSession: no ACS session with that id (no handshake).
	ErrNoSession = errors.New("warden: no such ACS session")
)

// Store keeps ACS sessions, their replay windows and their audit
// chains durably, beside the trace; storetest.RunACS is the contract, and
// Rules implements it over a backend's Rows. Every change is atomic, so
// replicas sharing the store agree on replays and on each chain.
type Store interface {
	// PutACSSession creates or replaces the session's handshake state
	// (keeping its chain: Head and Entries are not written by it).
	PutACSSession(ctx context.Context, s *Session) error
	// ACSSession returns the session, or ErrNoSession.
	ACSSession(ctx context.Context, id string) (*Session, error)
	// RememberRequest records key (a request_id, or "nonce:"+nonce) for
	// the session at `at`; if the same key was recorded for the session at
	// or after at-window, it is ErrReplay. Keys older than the window may
	// be forgotten.
	RememberRequest(ctx context.Context, session, key string, at time.Time, window time.Duration) error
	// AppendACSEntry appends e to the session's chain if its head is still
	// prev ("" for an empty chain), making e.EntryHash the head; otherwise
	// ErrChainMoved (nothing is written). ErrNoSession for an unknown
	// session.
	AppendACSEntry(ctx context.Context, session, prev string, e *Entry) error
	// ACSEntries returns the session's chain, oldest first, at most limit
	// entries after the first `after` (paging; limit <= 0 means 1000).
	ACSEntries(ctx context.Context, session string, after int64, limit int) ([]Entry, error)
	// EndACSSession marks the session ended.
	EndACSSession(ctx context.Context, id string, at time.Time) error
}
