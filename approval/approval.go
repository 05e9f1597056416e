// Package approval puts a human in the loop: a step a policy or hook asks
// about (decision ask) becomes an approval in the store; surfaces that can
// hold a call wait for it to be decided, the AOS endpoint answers at once and
// lets the identical step through once after it is approved; approvers
// decide through the API, the CLI or the console; every approval decision is
// recorded in the trace, linked both ways (docs/approvals.md).
package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
)

// Defaults and bounds of approvals.wait and approvals.ttl.
const (
	DefaultWait = 2 * time.Minute
	MaxWait     = 15 * time.Minute
	DefaultTTL  = 15 * time.Minute
	// sweepEvery is how often pending approvals past their expiry are
	// expired (a held call's own timer is exact; this catches approvals
	// answered at once, and those of a process that died).
	sweepEvery = time.Second
	// summaryMax bounds an approval's one-line summary, in bytes.
	summaryMax = 240
	// subscriberBuffer bounds what a slow stream subscriber may lag
	// behind; one that falls further behind is dropped (it reconnects).
	subscriberBuffer = 256
	// holdSlack is added to a held call's expiry for its write deadline:
	// time to answer once it is decided or expired.
	holdSlack = 30 * time.Second
	// MaxSubscribers bounds the approval streams open at once.
	MaxSubscribers = 64
)

// Notifier is told of every new approval (package notify); it must not
// block.
type Notifier interface {
	Notify(a Approval, link string)
}

// ContextNotifier is a Notifier that is also given the context of the
// decision that asked (its trace context: package notify sends it on as
// traceparent). Open calls NotifyContext on notifiers that implement it.
type ContextNotifier interface {
	Notifier
	NotifyContext(ctx context.Context, a Approval, link string)
}

// Options configure a Manager.
type Options struct {
	// Store keeps the approvals; Trace records their decisions.
	Store ApprovalStore
	Trace audit.Store
	// Filter redacts the trace records the Manager writes (the Decider's
	// record filter); Redact redacts an approval's summary and reason the
	// same way. nil: none.
	Filter audit.RecordFilter
	Redact func(string) string
	// Wait is how long a holding surface holds an asked call (approvals.wait;
	// 0: DefaultWait). TTL is how long an approved step answered at once may
	// be retried, and how long it stays pending (approvals.ttl; 0:
	// DefaultTTL).
	Wait, TTL time.Duration
	// Notifier, when set, is told of every new approval, with a link to it
	// in the console (URL + "/approvals/" + id; URL is approvals.url).
	Notifier Notifier
	URL      string
	// Log reports failures; nil discards.
	Log *slog.Logger
	// Now is the clock (tests); nil: time.Now.
	Now func() time.Time
}

// Manager keeps approvals for a Guardian: it implements Approvals
// for the Decider, and Decide, Get, List and Subscribe for the API. It is
// safe for concurrent use.
type Manager struct {
	o   Options
	log *slog.Logger

	mu      sync.Mutex
	waiters map[string]chan struct{} // held approvals: closed when decided here
	subs    map[chan Approval]struct{}
	stop    chan struct{}
	done    chan struct{}
	// followed is closed when follow has returned (at once when the
	// store is no ChangeFeed).
	followed chan struct{}
}

// ChangeFeed is an ApprovalStore shared by several processes (replicas)
// that tells each of the approvals the others create, decide or expire, as
// they commit (package postgres: LISTEN/NOTIFY). With one, a call held here
// is released as soon as another replica decides it, rather than by the
// next sweep, and Subscribe's streams carry every replica's changes.
type ChangeFeed interface {
	// ApprovalChanges returns the ids of approvals that others change,
	// until ctx ends (then the channel is closed; it may close earlier,
	// when the subscriber lags). An empty id means changes may have been
	// missed: re-read what you wait for.
	ApprovalChanges(ctx context.Context) (<-chan string, error)
}

// followRetry is how long follow waits before subscribing again after the
// feed failed or closed (meanwhile the sweep still wakes held calls).
const followRetry = 250 * time.Millisecond

var _ Approvals = (*Manager)(nil)

// New returns a Manager and starts its expiry sweep; Close stops it.
func New(o Options) *Manager {
	if o.Wait <= 0 {
		o.Wait = DefaultWait
	}
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Redact == nil {
		o.Redact = func(s string) string { return s }
	}
	m := &Manager{o: o, log: o.Log, waiters: map[string]chan struct{}{},
		subs: map[chan Approval]struct{}{}, stop: make(chan struct{}), done: make(chan struct{}),
		followed: make(chan struct{})}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	go m.sweep()
	if feed, ok := o.Store.(ChangeFeed); ok {
		go m.follow(feed)
	} else {
		close(m.followed)
	}
	return m
}

// Close stops the expiry sweep. Held calls still waiting end when their
// own timers or contexts do.
func (m *Manager) Close() {
	select {
	case <-m.stop:
	default:
		close(m.stop)
	}
	<-m.done
	<-m.followed
}

// Wait and TTL return the configured durations.
func (m *Manager) Wait() time.Duration { return m.o.Wait }

// TTL returns how long an approved step answered at once may be retried.
func (m *Manager) TTL() time.Duration { return m.o.TTL }

// holds reports whether surface holds an asked call open: every surface
// but AOS and ACS, which answer at once (ACS with an ask disposition whose
// ask_details name the approval; the identical step is let through once
// after it is approved).
func holds(surface string) bool {
	return surface != warden.SurfaceAOS && surface != warden.SurfaceACS
}

// Use implements Approvals: an approved, unused approval of the
// identical step decided within the TTL lets it through, once; a pending
// approval of the identical step answered at once is named again instead of
// opening another (an agent retrying before anyone decided); more than
// MaxPendingPerSession approvals pending in the step's session refuse it.
func (m *Manager) Use(ctx context.Context, ev *warden.Event, recordID string) (*Approval, error) {
	key, err := Key(ev)
	if err != nil {
		return nil, err
	}
	now := m.o.Now()
	a, err := m.o.Store.UseApproval(ctx, key, now.Add(-m.o.TTL), now, recordID)
	if err != nil {
		return nil, err
	}
	if a != nil {
		m.publish(*a)
		return a, nil
	}
	pending, err := m.o.Store.ListApprovals(ctx, ApprovalQuery{State: ApprovalPending,
		Session: ev.SessionID, Tenant: ev.Principal.Tenant, Limit: MaxPendingPerSession})
	if err != nil {
		return nil, err
	}
	for i := range pending {
		if p := &pending[i]; !p.Hold && p.Key == key && p.Expires.After(now) {
			return p, nil
		}
	}
	if len(pending) >= MaxPendingPerSession {
		return nil, fmt.Errorf("%w: %d approvals are pending in session %q", ErrTooManyPending, len(pending), ev.SessionID)
	}
	return nil, nil
}

// MaxPendingPerSession bounds the approvals pending at once in one session
// (steps without a session share one bound): an agent cannot flood the
// approvers or the store.
const MaxPendingPerSession = 100

// ErrTooManyPending refuses an asked step whose session already has
// MaxPendingPerSession approvals pending.
var ErrTooManyPending = errors.New("too many approvals pending")

// ErrSelfApproval refuses an approver deciding an approval its own token
// asked for: the agent that asks must not be the one that approves.
var ErrSelfApproval = errors.New("an approval cannot be decided by the caller that asked for it")

// Open implements Approvals: it stores the pending approval
// rec.ApprovalID, tells the notifier and the streams.
func (m *Manager) Open(ctx context.Context, ev *warden.Event, out *warden.Outcome, rec *audit.Record) (*Approval, error) {
	key, err := Key(ev)
	if err != nil {
		return nil, err
	}
	now := m.o.Now().UTC()
	a := &Approval{
		ID: rec.ApprovalID, State: ApprovalPending, Event: m.o.Redact(ev.Name), Surface: ev.Surface,
		SessionID: ev.SessionID, AgentID: ev.Agent.ID, Tool: m.o.Redact(ev.Tool.Name),
		Summary: Summary(ev, m.o.Redact), Reason: m.o.Redact(out.Reason), PolicyID: out.PolicyID,
		Created: now, RecordID: rec.ID, Caller: ev.Principal.Name, Tenant: ev.Principal.Tenant,
		Key: key, Hold: holds(ev.Surface),
	}
	if a.Hold {
		// The held call itself is what an approval lets through: no retry
		// may use it (an empty key never matches).
		a.Key = ""
		a.Expires = now.Add(m.o.Wait)
		m.mu.Lock()
		m.waiters[a.ID] = make(chan struct{})
		m.mu.Unlock()
	} else {
		a.Expires = now.Add(m.o.TTL)
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), audit.RecordTimeout)
	defer cancel()
	if err := m.o.Store.CreateApproval(cctx, a); err != nil {
		m.forget(a.ID)
		return nil, err
	}
	m.publish(*a)
	if cn, ok := m.o.Notifier.(ContextNotifier); ok {
		cn.NotifyContext(ctx, *a, m.Link(a.ID))
	} else if m.o.Notifier != nil {
		m.o.Notifier.Notify(*a, m.Link(a.ID))
	}
	return a, nil
}

// Link returns the console link of approval id ("" without approvals.url).
func (m *Manager) Link(id string) string {
	if m.o.URL == "" {
		return ""
	}
	return strings.TrimSuffix(m.o.URL, "/") + "/approvals/" + id
}

func (m *Manager) forget(id string) {
	m.mu.Lock()
	delete(m.waiters, id)
	m.mu.Unlock()
}

// Await implements Approvals: it holds the asked call until its
// approval is decided (here, or by another process sharing the store: a
// ChangeFeed store reports it as it commits, else the sweep notices within
// a second), it
// expires (approval_timeout), or ctx ends (the caller hung up: the approval
// is withdrawn, state expired). The waiting costs a timer and a channel,
// no goroutine of its own.
func (m *Manager) Await(ctx context.Context, out warden.Outcome) warden.Outcome {
	id := out.ApprovalID
	m.mu.Lock()
	ch := m.waiters[id]
	m.mu.Unlock()
	if ch == nil { // not held here (answered at once, or unknown)
		return out.WithoutHold()
	}
	defer m.forget(id)
	a, err := m.o.Store.Approval(context.WithoutCancel(ctx), id)
	if err != nil {
		m.log.Warn("approval: reading a held approval", "id", id, "err", err)
		return deny(out, warden.CodeApprovalUnavailable, "approval not available: "+err.Error())
	}
	if !a.Decided() {
		ExtendHold(ctx, a.Expires.Add(holdSlack))
		timer := time.NewTimer(time.Until(a.Expires))
		defer timer.Stop()
		select {
		case <-ch:
		case <-timer.C:
			a = m.expire(id, warden.CodeApprovalTimeout)
		case <-ctx.Done():
			a = m.expire(id, "withdrawn: the caller hung up")
		}
		if a == nil || !a.Decided() {
			if a, err = m.o.Store.Approval(context.WithoutCancel(ctx), id); err != nil {
				return deny(out, warden.CodeApprovalUnavailable, "approval not available: "+err.Error())
			}
		}
	}
	return Settled(out, a)
}

// Settled returns the answer of an asked outcome whose approval a is
// decided: allowed (or modified) when approved, refused otherwise.
func Settled(out warden.Outcome, a *Approval) warden.Outcome {
	switch a.State {
	case ApprovalApproved:
		return Approved(out, a)
	case ApprovalDenied:
		msg := "approval denied"
		if a.DecidedBy != "" {
			msg += " by " + a.DecidedBy
		}
		if a.DecidedReason != "" {
			msg += ": " + a.DecidedReason
		}
		return deny(out, warden.CodeApprovalDenied, msg)
	case ApprovalExpired:
		return deny(out, warden.CodeApprovalTimeout, "approval not granted in time")
	}
	return out.WithoutHold()
}

func deny(out warden.Outcome, code, reason string) warden.Outcome {
	if out.Reason != "" {
		reason = out.Reason + "; " + reason
	}
	out.Verdict = warden.Deny
	out.Reason = reason
	out.ReasonCodes = append([]string{code}, out.ReasonCodes...)
	out.Payload = nil
	return out
}

// expire moves a pending approval to expired with reason and records it;
// it returns the approval as stored (decided by someone else meanwhile, if
// that won the race).
func (m *Manager) expire(id, reason string) *Approval {
	ctx, cancel := context.WithTimeout(context.Background(), audit.RecordTimeout)
	defer cancel()
	a, err := m.o.Store.DecideApproval(ctx, id, ApprovalExpired, "", reason, m.o.Now().UTC())
	if err != nil {
		if !errors.Is(err, ErrApprovalDecided) {
			m.log.Warn("approval: expiring", "id", id, "err", err)
		}
		return a
	}
	m.decided(ctx, a)
	return a
}

// Resolve records an approver's decision on approval id: approve or deny,
// with a reason, by principal by (a tenant's approver decides only its
// tenant's approvals: another tenant's is ErrApprovalNotFound; the
// caller that asked cannot decide it: ErrSelfApproval). An approval that
// is no longer pending is ErrApprovalDecided (409). The reason is
// redacted (Options.Redact) before it is stored.
func (m *Manager) Resolve(ctx context.Context, id string, approve bool, by warden.Principal, reason string) (*Approval, error) {
	a, err := m.Get(ctx, id, by.Tenant)
	if err != nil {
		return nil, err
	}
	if by.Name != "" && by.Name == a.Caller {
		return nil, ErrSelfApproval
	}
	state := ApprovalDenied
	if approve {
		state = ApprovalApproved
	}
	// Stored, listed and streamed redacted, as the trace record of the
	// decision has it: an approver who pastes a secret into the reason does
	// not put it in the approvals table.
	reason = m.o.Redact(reason)
	a, err = m.o.Store.DecideApproval(ctx, id, state, by.Name, reason, m.o.Now().UTC())
	if err != nil {
		if errors.Is(err, ErrApprovalDecided) && a != nil && a.State == ApprovalExpired {
			m.wake(id) // it expired just now: let a holder answer
		}
		return a, err
	}
	m.decided(ctx, a)
	return a, nil
}

// decided records approval a's decision in the trace, links it, and wakes
// the call held on it and the streams.
func (m *Manager) decided(ctx context.Context, a *Approval) {
	if rid, err := m.record(ctx, a); err != nil {
		m.log.Warn("approval: recording the decision", "id", a.ID, "err", err)
	} else if err := m.o.Store.SetDecisionRecord(ctx, a.ID, rid); err != nil {
		m.log.Warn("approval: linking the decision record", "id", a.ID, "err", err)
	} else {
		a.DecisionRecordID = rid
	}
	m.wake(a.ID)
	m.publish(*a)
}

func (m *Manager) wake(id string) {
	m.mu.Lock()
	if ch := m.waiters[id]; ch != nil {
		select {
		case <-ch:
		default:
			close(ch)
		}
	}
	m.mu.Unlock()
}

// record writes the trace record of an approval's decision: surface
// approval, the asked step's event, session, agent and tenant, decision
// allow (approved) or deny, the approver as caller, the approval as input.
func (m *Manager) record(ctx context.Context, a *Approval) (string, error) {
	if m.o.Trace == nil {
		return "", errors.New("no trace")
	}
	ev := &warden.Event{Name: a.Event, Surface: warden.SurfaceApproval, SessionID: a.SessionID,
		Agent: warden.Agent{ID: a.AgentID}, Principal: warden.Principal{Name: a.DecidedBy, Tenant: a.Tenant}}
	ev.Raw, _ = json.Marshal(a)
	out := warden.Outcome{Verdict: warden.Deny, PolicyID: a.PolicyID, ApprovalID: a.ID}
	switch a.State {
	case ApprovalApproved:
		out.Verdict, out.ReasonCodes = warden.Allow, []string{warden.CodeApprovalGranted}
	case ApprovalDenied:
		out.ReasonCodes = []string{warden.CodeApprovalDenied}
	default:
		out.ReasonCodes = []string{warden.CodeApprovalTimeout}
	}
	out.Reason = fmt.Sprintf("approval %s %s", a.ID, a.State)
	if a.DecidedReason != "" {
		out.Reason += ": " + a.DecidedReason
	}
	rec := audit.NewRecord(ev, &out, m.o.Now())
	rec.ApprovalID = a.ID
	rec.Results = []warden.Result{{Guardian: "approval", Decision: out.Verdict.String(), Mode: "enforce", Reason: out.Reason}}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), audit.RecordTimeout)
	defer cancel()
	if m.o.Filter != nil {
		if err := m.o.Filter(rctx, rec); err != nil {
			return rec.ID, err
		}
	}
	return rec.ID, m.o.Trace.Record(rctx, rec)
}

// Get returns approval id; for a tenant's caller (tenant != ""), another
// tenant's approval is ErrApprovalNotFound.
func (m *Manager) Get(ctx context.Context, id, tenant string) (*Approval, error) {
	a, err := m.o.Store.Approval(ctx, id)
	if err != nil {
		return nil, err
	}
	if tenant != "" && a.Tenant != tenant {
		return nil, ErrApprovalNotFound
	}
	return a, nil
}

// List returns the approvals q selects.
func (m *Manager) List(ctx context.Context, q ApprovalQuery) ([]Approval, error) {
	return m.o.Store.ListApprovals(ctx, q)
}

// Subscribe returns a channel of approvals as they are created and change
// state here, and a cancel func that must be called. ok is false when
// MaxSubscribers are subscribed. A subscriber that falls subscriberBuffer
// changes behind has its channel closed (it should reconnect and list).
func (m *Manager) Subscribe() (ch <-chan Approval, cancel func(), ok bool) {
	c := make(chan Approval, subscriberBuffer)
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.subs) >= MaxSubscribers {
		return nil, func() {}, false
	}
	m.subs[c] = struct{}{}
	return c, func() {
		m.mu.Lock()
		if _, live := m.subs[c]; live {
			delete(m.subs, c)
			close(c)
		}
		m.mu.Unlock()
	}, true
}

func (m *Manager) publish(a Approval) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for c := range m.subs {
		select {
		case c <- a:
		default: // too far behind: drop it
			delete(m.subs, c)
			close(c)
		}
	}
}

// sweep expires overdue pending approvals every sweepEvery.
func (m *Manager) sweep() {
	defer close(m.done)
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), audit.RecordTimeout)
		expired, err := m.o.Store.ExpireApprovals(ctx, m.o.Now().UTC())
		if err != nil {
			m.log.Warn("approval: expiring overdue approvals", "err", err)
		}
		for i := range expired {
			a := expired[i]
			if a.DecidedReason == "" {
				a.DecidedReason = warden.CodeApprovalTimeout
			}
			m.decided(ctx, &a)
		}
		m.wakeDecidedElsewhere(ctx)
		cancel()
	}
}

// wakeDecidedElsewhere wakes the calls held here whose approval another
// process sharing the store decided (the server's console deciding a call
// `warden mcp stdio` holds, another replica): that process recorded the
// decision; here the held call only has to be let go. One point read per
// held call per sweep.
func (m *Manager) wakeDecidedElsewhere(ctx context.Context) {
	m.mu.Lock()
	ids := make([]string, 0, len(m.waiters))
	for id := range m.waiters {
		ids = append(ids, id)
	}
	m.mu.Unlock()
	for _, id := range ids {
		a, err := m.o.Store.Approval(ctx, id)
		if err == nil && a.Decided() {
			m.wake(id)
		}
	}
}

// follow wakes the calls held here on the approvals other replicas decide,
// and tells the streams of every change, as feed reports them, until Close.
func (m *Manager) follow(feed ChangeFeed) {
	defer close(m.followed)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-m.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	for ctx.Err() == nil {
		ch, err := feed.ApprovalChanges(ctx)
		if err != nil {
			m.log.Warn("approval: following other replicas' approvals", "err", err)
		} else {
			for id := range ch {
				m.changed(ctx, id)
			}
			// The feed closed (lagging, or Close): what it would have
			// said is re-read below.
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(followRetry):
		}
		m.changed(ctx, "")
	}
}

// changed handles one id from the feed: the call held on it here, if any,
// is woken once it is decided, and the streams are told. "" re-reads every
// held call.
func (m *Manager) changed(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(ctx, audit.RecordTimeout)
	defer cancel()
	if id == "" {
		m.wakeDecidedElsewhere(ctx)
		return
	}
	m.mu.Lock()
	held := m.waiters[id] != nil
	watched := len(m.subs) > 0
	m.mu.Unlock()
	if !held && !watched {
		return
	}
	a, err := m.o.Store.Approval(ctx, id)
	if err != nil {
		return // not this schema's, or the store is down: the sweep retries
	}
	if held && a.Decided() {
		m.wake(id)
	}
	if watched {
		m.publish(*a)
	}
}
