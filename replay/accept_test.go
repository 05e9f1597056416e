package replay_test

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/replay"
	"github.com/wardenhq/warden/sqlite"
)

// policyIDs returns the policy results of rs by policy id: decision and
// mode.
func policyIDs(rs []warden.Result) map[string]string {
	m := map[string]string{}
	for _, r := range rs {
		if r.PolicyID != "" && (r.Kind == "" || r.Kind == "policy") && r.Mode != "shadow" {
			m[r.PolicyID] = r.Decision + "/" + r.Mode
		}
	}
	return m
}

// TestReplayEqualsDirectDecisions records 10,000 decisions of a mixed
// workload through a Guardian, replays the trace under a changed policy
// set, and checks every count of the report against deciding each step's
// event again with a Guardian opened on the changed set (no trace): the
// counts per recorded → new decision, the changed records, and per policy
// the records it newly matches, no longer matches and decides otherwise.
func TestReplayEqualsDirectDecisions(t *testing.T) {
	const n = 10000
	dir := t.TempDir()
	t0 := time.Now()
	recorded := record(t, dir, nil, n, policyDir(t, livePolicies))
	t.Logf("recorded %d decisions in %v", n, time.Since(t0).Round(time.Millisecond))
	cand := policyDir(t, candidatePolicies)

	direct, err := guardian.Open(guardian.Options{Policies: []string{cand}})
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close(context.Background())
	type key struct{ from, to string }
	trans := map[key]int{}
	changed := map[string]bool{}
	deltas := map[string]replay.PolicyDelta{}
	bump := func(id string, f func(*replay.PolicyDelta)) {
		d := deltas[id]
		d.Policy = id
		f(&d)
		deltas[id] = d
	}
	for id, l := range recorded {
		out, err := direct.Decide(context.Background(), step(l.step))
		if err != nil {
			t.Fatal(err)
		}
		trans[key{l.decision, out.Verdict.String()}]++
		if out.Verdict.String() != l.decision || out.PolicyID != l.policy {
			changed[id] = true
		}
		was, now := policyIDs(l.results), policyIDs(out.Results)
		for p, d := range was {
			if nd, ok := now[p]; !ok {
				bump(p, func(x *replay.PolicyDelta) { x.Unmatched++ })
			} else if nd != d {
				bump(p, func(x *replay.PolicyDelta) { x.Changed++ })
			}
		}
		for p := range now {
			if _, ok := was[p]; !ok {
				bump(p, func(x *replay.PolicyDelta) { x.NewlyMatched++ })
			}
		}
	}

	st, err := sqlite.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := replay.Open(guardian.Options{Policies: []string{cand}})
	if err != nil {
		t.Fatal(err)
	}
	t0 = time.Now()
	rep, err := r.Run(context.Background(), st, audit.Query{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("replayed %d records in %v", rep.Summary.Replayed, time.Since(t0).Round(time.Millisecond))

	s := rep.Summary
	if s.Replayed != n || s.Changed != len(changed) || len(rep.Changed) != len(changed) {
		t.Fatalf("replayed %d, changed %d (%d listed); want %d, %d", s.Replayed, s.Changed, len(rep.Changed), n, len(changed))
	}
	got := map[key]int{}
	for _, tr := range s.Transitions {
		got[key{tr.From, tr.To}] = tr.Records
	}
	if !maps.Equal(got, trans) {
		t.Errorf("transitions:\n got %v\nwant %v", got, trans)
	}
	for _, c := range rep.Changed {
		if !changed[c.ID] {
			t.Errorf("record %s listed as changed (%s → %s); the direct decision did not change", c.ID, c.Old.Decision, c.New.Decision)
		}
	}
	gotDeltas := map[string]replay.PolicyDelta{}
	for _, d := range s.Policies {
		gotDeltas[d.Policy] = d
	}
	if !maps.Equal(gotDeltas, deltas) {
		t.Errorf("per policy:\n got %v\nwant %v", gotDeltas, deltas)
	}
	// The workload covers every decision, before and after.
	for _, v := range []string{"allow", "deny", "modify", "ask"} {
		if !slices.ContainsFunc(s.Transitions, func(tr replay.Transition) bool { return tr.From == v }) ||
			!slices.ContainsFunc(s.Transitions, func(tr replay.Transition) bool { return tr.To == v }) {
			t.Errorf("no %s on both sides: %v", v, s.Transitions)
		}
	}
	t.Logf("transitions %v; %d changed; policies %v", s.Transitions, s.Changed, s.Policies)
}
