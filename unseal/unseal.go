// Package unseal shows the originals of redacted values to those who may
// see them, and erases them on request, recording both in the trace.
//
// The trace stores every detector match redacted ([REDACTED:kind:tag]) and
// the value it replaced sealed beside it (redact.Seal, package seal). A
// Service opens those values for a viewer — a caller with the unseal scope,
// or an approver for the approvals it may decide — and returns the record
// as it was decided (redact.Reveal); every unseal is itself a trace record
// (surface "unseal", event "unseal": who, which record, when, from where),
// so it is hash-chained, listed in the console and kept as long as the
// trace. A viewer held to a tenant never opens another tenant's record:
// the attempt is refused (ErrOtherTenant) and recorded. Forget erases one
// session's originals by destroying its keys, and records the erasure
// (event "forget"). docs/security.md explains the model.
package unseal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/internal/jsonappend"
	"github.com/wardenhq/warden/redact"
	"github.com/wardenhq/warden/seal"
)

// Surface marks the trace records of unseals and erasures: not steps an
// agent took (replay skips them). Their events are EventUnseal and
// EventForget.
const (
	Surface     = "unseal"
	EventUnseal = "unseal"
	EventForget = "forget"
)

// Reason codes of the records Service writes.
const (
	CodeUnsealed    = "unsealed"
	CodeOtherTenant = "unseal_other_tenant"
	CodeErased      = "originals_erased"
)

// ErrOtherTenant refuses a viewer held to one tenant a record of another.
var ErrOtherTenant = errors.New("unseal: the record belongs to another tenant")

// ErrOff is returned when sealing is not configured: there are no
// originals to open or erase.
var ErrOff = errors.New("unseal: sealed originals are off (trace.raw_input, or no key)")

// Viewer is who asks to see originals, and from where.
type Viewer struct {
	// Name is the principal (a token's or certificate's name; "" without
	// auth); Tenant the tenant it is held to ("" for none: every tenant).
	Name, Tenant string
	// From is where the request came from (a remote address, "cli").
	From string
	// Via is the surface that showed the originals: "api", "console",
	// "cli".
	Via string
}

// Service opens and erases sealed originals. A nil *Service has none:
// Reveal returns records as stored, Forget fails with ErrOff.
type Service struct {
	sealer *seal.Sealer
	trace  audit.Store
	now    func() time.Time
}

// New returns a Service opening values with s and recording in trace.
func New(s *seal.Sealer, trace audit.Store) *Service {
	return &Service{sealer: s, trace: trace, now: time.Now}
}

// Sealer returns the Service's Sealer (nil for a nil Service).
func (s *Service) Sealer() *seal.Sealer {
	if s == nil {
		return nil
	}
	return s.sealer
}

// Reveal returns rec with its originals revealed for v, and records the
// unseal. A record without sealed values is returned as it is, and no
// unseal is recorded. A record of another tenant than v's (v held to one)
// is refused, with or without sealed values: ErrOtherTenant, recorded. Values whose keys were destroyed
// stay redacted (Opened.Erased says how many).
func (s *Service) Reveal(ctx context.Context, v Viewer, rec *audit.Record) (*audit.Record, redact.Opened, error) {
	opened, err := s.Open(ctx, v, rec)
	if err != nil {
		return nil, opened, err
	}
	if len(opened.Originals) == 0 {
		return rec, opened, nil
	}
	return redact.Reveal(rec, opened.Originals), opened, nil
}

// Open opens rec's originals for v and records the unseal, as Reveal
// does, for a caller that reveals something else than the record with
// them (an approval's summary: redact.RevealString).
func (s *Service) Open(ctx context.Context, v Viewer, rec *audit.Record) (redact.Opened, error) {
	if s == nil {
		return redact.Opened{}, nil
	}
	if v.Tenant != "" && v.Tenant != rec.Tenant {
		// Refused and recorded whether or not the record holds sealed
		// values: the attempt is what is recorded.
		err := s.note(ctx, v, v.Tenant, "", warden.Deny, CodeOtherTenant,
			fmt.Sprintf("unseal refused: record %s belongs to another tenant", rec.ID), rec.ID, 0)
		return redact.Opened{}, errors.Join(ErrOtherTenant, err)
	}
	if len(rec.Sealed) == 0 {
		return redact.Opened{}, nil
	}
	opened, err := redact.Open(ctx, s.sealer, rec)
	if err != nil {
		return redact.Opened{}, err
	}
	n := len(opened.Originals)
	if n == 0 {
		return opened, nil // nothing shown: nothing to record
	}
	reason := fmt.Sprintf("%s unsealed %d value(s) of record %s via %s", who(v), n, rec.ID, v.Via)
	if opened.Erased > 0 {
		reason += fmt.Sprintf(" (%d erased)", opened.Erased)
	}
	if err := s.note(ctx, v, rec.Tenant, rec.SessionID, warden.Allow, CodeUnsealed, reason, rec.ID, n); err != nil {
		return redact.Opened{}, err // not shown unless recorded
	}
	return opened, nil
}

// Originals opens rec's originals without recording an unseal: for the
// Guardian's own use of them (replay deciding on what was decided), never
// for showing them to someone.
func (s *Service) Originals(ctx context.Context, rec *audit.Record) (redact.Opened, error) {
	if s == nil || len(rec.Sealed) == 0 {
		return redact.Opened{}, nil
	}
	return redact.Open(ctx, s.sealer, rec)
}

// Forget erases the originals of tenant's session (tenant "" for records
// without one) by destroying its keys in every period, and records the
// erasure (event "forget", by v). It returns how many keys it destroyed;
// the session's records stay, redacted, and still verify.
func (s *Service) Forget(ctx context.Context, v Viewer, tenant, session string) (int, error) {
	if s == nil {
		return 0, ErrOff
	}
	if v.Tenant != "" && v.Tenant != tenant {
		return 0, ErrOtherTenant
	}
	st := tenant
	if st == "" {
		st = redact.NoTenant
	}
	n, err := s.sealer.ForgetSession(ctx, st, session)
	if err != nil {
		return n, err
	}
	reason := fmt.Sprintf("%s erased the sealed originals of session %s (%d key(s) destroyed) via %s", who(v), session, n, v.Via)
	return n, s.record(ctx, v, tenant, session, EventForget, warden.Allow, CodeErased, reason,
		jsonappend.Marshal(map[string]any{"session": session, "keys_destroyed": n, "via": v.Via, "from": v.From}))
}

func who(v Viewer) string {
	if v.Name == "" {
		return "an unauthenticated caller"
	}
	return v.Name
}

// note records an unseal of record id (n values shown).
func (s *Service) note(ctx context.Context, v Viewer, tenant, session string, d warden.Verdict, code, reason, id string, n int) error {
	return s.record(ctx, v, tenant, session, EventUnseal, d, code, reason,
		jsonappend.Marshal(map[string]any{"record": id, "values": n, "via": v.Via, "from": v.From}))
}

func (s *Service) record(ctx context.Context, v Viewer, tenant, session, event string, d warden.Verdict, code, reason string, input json.RawMessage) error {
	id, err := uuid.NewV7()
	if err != nil {
		id = uuid.New()
	}
	rec := &audit.Record{ID: id.String(), Time: s.now().UTC(), Event: event, Surface: Surface,
		SessionID: session, Decision: d.String(), Reason: reason, ReasonCodes: []string{code},
		Results: []warden.Result{}, Input: input, Caller: v.Name, Tenant: tenant}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), audit.RecordTimeout)
	defer cancel()
	if err := s.trace.Record(rctx, rec); err != nil {
		return fmt.Errorf("%w: recording the %s: %v", audit.ErrUnavailable, event, err)
	}
	return nil
}
