package replay

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
)

// Report is what a replay found: the summary, then every changed record,
// oldest first.
type Report struct {
	Summary Summary  `json:"summary"`
	Changed []Change `json:"changed"`
}

// Summary counts a replay's records.
type Summary struct {
	// Replayed is the number of records decided again; Changed, those
	// whose decision or deciding policy differs from the recorded one.
	Replayed int `json:"replayed"`
	Changed  int `json:"changed"`
	// SkippedApprovals counts the records of an approval's own decision
	// (surface approval): not a step an agent took, not decided again.
	SkippedApprovals int `json:"skipped_approvals"`
	// SkippedUnseal counts the records of an unseal or an erasure of
	// sealed originals (surface unseal): not steps, not decided again.
	SkippedUnseal int `json:"skipped_unseal"`
	// Redacted counts the changed records noted NoteRedacted.
	Redacted int `json:"redacted"`
	// Originals says what the records were decided on: their originals
	// (Replayer.WithOriginals) or the redacted form.
	Originals Originals `json:"originals"`
	// Transitions counts the records per recorded → replayed decision,
	// unchanged ones included.
	Transitions []Transition `json:"transitions"`
	// Policies lists, per policy, the records whose result for it changed.
	Policies []PolicyDelta `json:"policies"`
	// Revision is the candidate set's revision (Records carry the live
	// set's as policy_revision).
	Revision string `json:"policy_revision"`
	// Shadow is where the live decision and the shadow set recorded beside
	// it (serve --shadow-policy) disagreed, in the records replayed; zero
	// when none carries a shadow verdict.
	Shadow ShadowDelta `json:"shadow"`
}

// ShadowDelta counts the replayed records that carry a shadow set's
// verdict (Records) and those where it differs from the recorded live
// decision (Disagree), per live → shadow decision.
type ShadowDelta struct {
	Records     int          `json:"records"`
	Disagree    int          `json:"disagree"`
	Transitions []Transition `json:"transitions,omitempty"`
}

// Transition is the number of records recorded with decision From and
// replayed as To.
type Transition struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Records int    `json:"records"`
}

// PolicyDelta counts the records where one policy's result changed:
// NewlyMatched, it matches now and did not live; Unmatched, it matched
// live and does not now; Changed, it matches both ways with another
// decision or mode.
type PolicyDelta struct {
	Policy       string `json:"policy_id"`
	NewlyMatched int    `json:"newly_matched"`
	Unmatched    int    `json:"unmatched"`
	Changed      int    `json:"changed"`
}

// Change is one record the replay decided otherwise.
type Change struct {
	ID      string    `json:"id"`
	Time    time.Time `json:"time"`
	Event   string    `json:"event"`
	Surface string    `json:"surface"`
	Tool    string    `json:"tool"`
	Session string    `json:"session_id"`
	Old     Verdict   `json:"old"`
	New     Verdict   `json:"new"`
	// Notes say why the new decision may not be what live would decide
	// (NoteRedacted; hooks the live chain never reached).
	Notes []string `json:"notes,omitempty"`

	seq int // the record's position in the scan
}

// Verdict is a decision with the policy that made it ("" for none) and its
// reason.
type Verdict struct {
	Decision string `json:"decision"`
	Policy   string `json:"policy_id"`
	Reason   string `json:"reason"`
}

// tally accumulates one replay's counts.
type tally struct {
	sum     Summary
	trans   map[[2]string]int
	shadow  map[[2]string]int // live → recorded shadow verdict, disagreeing records
	pol     map[string]*PolicyDelta
	changes []Change
}

func newTally() *tally {
	return &tally{trans: map[[2]string]int{}, shadow: map[[2]string]int{}, pol: map[string]*PolicyDelta{}, changes: []Change{}}
}

// add counts rec, the seq-th record of the scan, replayed as out by r.
// dec is rec as it was decided: with the originals o holds put back.
func (t *tally) add(r *Replayer, rec, dec *audit.Record, o *opened, out *warden.Outcome, seq int) {
	t.sum.Replayed++
	t.sum.Originals.count(dec, o)
	if sh, ok := audit.ShadowSummary(rec.Results); ok {
		t.sum.Shadow.Records++
		if rec.ShadowDisagrees() {
			t.sum.Shadow.Disagree++
			t.shadow[[2]string{rec.Decision, sh.Decision}]++
		}
	}
	now := out.Verdict.String()
	t.trans[[2]string{rec.Decision, now}]++
	var touched groups // the detector groups read by the policies whose result changed
	c := r.candidate(rec.Tenant)
	diffPolicies(rec.Results, out.Results, func(id string, d *PolicyDelta) {
		p := t.pol[id]
		if p == nil {
			p = &PolicyDelta{Policy: id}
			t.pol[id] = p
		}
		p.NewlyMatched += d.NewlyMatched
		p.Unmatched += d.Unmatched
		p.Changed += d.Changed
		touched |= c.reads[id]
	})
	if now == rec.Decision && out.PolicyID == rec.PolicyID {
		return
	}
	t.sum.Changed++
	ch := Change{
		ID: rec.ID, Time: rec.Time, Event: rec.Event, Surface: rec.Surface, Tool: rec.Tool, Session: rec.SessionID,
		Old: Verdict{Decision: rec.Decision, Policy: rec.PolicyID, Reason: rec.Reason},
		New: Verdict{Decision: now, Policy: out.PolicyID, Reason: conceal(out.Reason, o.originals)}, seq: seq,
	}
	if touched != 0 && redactedGroups(dec)&touched != 0 {
		ch.Notes = append(ch.Notes, NoteRedacted)
		t.sum.Redacted++
	}
	if rec.Decision == warden.Deny.String() && out.Verdict != warden.Deny {
		if names := r.missingHooks(rec); len(names) > 0 {
			ch.Notes = append(ch.Notes, fmt.Sprintf("live, the chain stopped at the deny before %s %s: replayed without %s",
				plural(len(names), "hook", "hooks"), strings.Join(names, ", "), plural(len(names), "it", "them")))
		}
	}
	t.changes = append(t.changes, ch)
}

// diffPolicies calls fn for each policy whose result differs between the
// recorded results and the replayed ones, with that policy's delta (one
// count).
func diffPolicies(old, now []warden.Result, fn func(id string, d *PolicyDelta)) {
	for i := range old {
		o := &old[i]
		if !policyResult(o) {
			continue
		}
		j := slices.IndexFunc(now, func(n warden.Result) bool { return policyResult(&n) && n.PolicyID == o.PolicyID })
		switch {
		case j < 0:
			fn(o.PolicyID, &PolicyDelta{Unmatched: 1})
		case now[j].Decision != o.Decision || now[j].Mode != o.Mode:
			fn(o.PolicyID, &PolicyDelta{Changed: 1})
		}
	}
	for i := range now {
		n := &now[i]
		if policyResult(n) && !slices.ContainsFunc(old, func(o warden.Result) bool {
			return policyResult(&o) && o.PolicyID == n.PolicyID
		}) {
			fn(n.PolicyID, &PolicyDelta{NewlyMatched: 1})
		}
	}
}

// policyResult reports whether r is one policy's result in the live chain.
func policyResult(r *warden.Result) bool {
	return r.PolicyID != "" && r.Mode != modeShadow && isPolicy(r)
}

// report returns the tally as a Report, revision being the candidate set's.
func (t *tally) report(revision string) *Report {
	s := t.sum
	s.Revision = revision
	s.Transitions = make([]Transition, 0, len(t.trans))
	for k, n := range t.trans {
		s.Transitions = append(s.Transitions, Transition{From: k[0], To: k[1], Records: n})
	}
	slices.SortFunc(s.Transitions, func(a, b Transition) int {
		return cmp.Or(cmp.Compare(rank(a.From), rank(b.From)), cmp.Compare(rank(a.To), rank(b.To)))
	})
	for k, n := range t.shadow {
		s.Shadow.Transitions = append(s.Shadow.Transitions, Transition{From: k[0], To: k[1], Records: n})
	}
	slices.SortFunc(s.Shadow.Transitions, func(a, b Transition) int {
		return cmp.Or(cmp.Compare(rank(a.From), rank(b.From)), cmp.Compare(rank(a.To), rank(b.To)))
	})
	s.Policies = make([]PolicyDelta, 0, len(t.pol))
	for _, p := range t.pol {
		s.Policies = append(s.Policies, *p)
	}
	slices.SortFunc(s.Policies, func(a, b PolicyDelta) int { return strings.Compare(a.Policy, b.Policy) })
	return &Report{Summary: s, Changed: t.changes}
}

// rank orders decisions as they combine (allow, modify, ask, defer, deny);
// anything else last.
func rank(d string) int {
	v, err := warden.ParseRecorded(d)
	if err != nil {
		return 100
	}
	return int(v)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
