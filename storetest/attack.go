package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
)

// ApprovalTraceStore is a trace that also keeps approvals (the SQLite and
// PostgreSQL stores).
type ApprovalTraceStore interface {
	audit.Store
	approval.ApprovalStore
}

// ApprovalTrace names the approvals RecordApprovalTrace made.
type ApprovalTrace struct {
	// Denied was denied by "alice"; Used was approved by "bob" (answered
	// at once) and then used by the retry UsedBy; Pending is pending.
	Denied, Used, UsedBy, Pending string
}

// RecordApprovalTrace records in st what warden records for three
// approvals, as approval.Manager and the Decider do: each ask's record
// (naming the approval) and the pending approval; the decision of two of
// them (DecideApproval, the decision's record on surface approval with
// the approver as caller, SetDecisionRecord); the retry that used the
// approved one (UseApproval, then its record). A verify of st holds
// afterwards; an edit of the approvals table that the trace does not back
// must not (docs/verify.md).
func RecordApprovalTrace(t testing.TB, st ApprovalTraceStore) ApprovalTrace {
	t.Helper()
	ctx := context.Background()
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	n := 0
	record := func(r *audit.Record) {
		t.Helper()
		n++
		r.Time = t0.Add(time.Duration(n) * time.Second)
		if r.Results == nil {
			r.Results = []warden.Result{{Guardian: "policy", Decision: r.Decision, Mode: "enforce"}}
		}
		if err := st.Record(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	ask := func(approvalID, recordID, key string, hold bool) {
		t.Helper()
		surface := warden.SurfaceAOS
		if hold {
			surface = warden.SurfaceMCP
		}
		record(&audit.Record{ID: recordID, Event: "steps/toolCallRequest", Surface: surface,
			SessionID: "sess", AgentID: "agent", Decision: "ask", Reason: "ask a human",
			PolicyID: "ask-bash", Tool: "bash", Caller: "agent-token", ApprovalID: approvalID,
			Input: json.RawMessage(`{"tool":"bash"}`)})
		if err := st.CreateApproval(ctx, &approval.Approval{ID: approvalID, Event: "steps/toolCallRequest",
			Surface: surface, SessionID: "sess", AgentID: "agent", Tool: "bash", Summary: "bash",
			Reason: "ask a human", PolicyID: "ask-bash", Created: t0.Add(time.Duration(n) * time.Second),
			Expires: t0.Add(time.Hour), RecordID: recordID, Caller: "agent-token", Key: key, Hold: hold}); err != nil {
			t.Fatal(err)
		}
	}
	decide := func(approvalID, recordID string, state approval.ApprovalState, by string) {
		t.Helper()
		a, err := st.DecideApproval(ctx, approvalID, state, by, "looked at it", t0.Add(time.Duration(n+1)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		verdict, code := "deny", warden.CodeApprovalDenied
		if state == approval.ApprovalApproved {
			verdict, code = "allow", warden.CodeApprovalGranted
		}
		raw, _ := json.Marshal(a)
		record(&audit.Record{ID: recordID, Event: "steps/toolCallRequest", Surface: warden.SurfaceApproval,
			SessionID: "sess", AgentID: "agent", Decision: verdict, ReasonCodes: []string{code},
			Reason: "approval " + approvalID + " " + string(state) + ": looked at it", PolicyID: "ask-bash",
			Caller: by, ApprovalID: approvalID, Input: raw,
			Results: []warden.Result{{Guardian: "approval", Decision: verdict, Mode: "enforce"}}})
		if err := st.SetDecisionRecord(ctx, approvalID, recordID); err != nil {
			t.Fatal(err)
		}
	}
	f := ApprovalTrace{Denied: "appr-denied", Used: "appr-used", UsedBy: "rec-retry", Pending: "appr-pending"}
	ask(f.Denied, "rec-ask-denied", "", true)
	decide(f.Denied, "rec-decision-denied", approval.ApprovalDenied, "alice")
	ask(f.Used, "rec-ask-used", "key-used", false)
	decide(f.Used, "rec-decision-used", approval.ApprovalApproved, "bob")
	if a, err := st.UseApproval(ctx, "key-used", t0, t0.Add(time.Duration(n+1)*time.Second), f.UsedBy); err != nil || a == nil || a.ID != f.Used {
		t.Fatalf("UseApproval: %+v, %v", a, err)
	}
	record(&audit.Record{ID: f.UsedBy, Event: "steps/toolCallRequest", Surface: warden.SurfaceAOS,
		SessionID: "sess", AgentID: "agent", Decision: "allow", Reason: "approved by bob: looked at it",
		ReasonCodes: []string{warden.CodeApprovalGranted}, PolicyID: "ask-bash", Tool: "bash",
		Caller: "agent-token", ApprovalID: f.Used, Input: json.RawMessage(`{"tool":"bash"}`)})
	ask(f.Pending, "rec-ask-pending", "key-pending", false)
	return f
}

// ApprovalEdits are edits of the approvals table (SQL for both stores'
// approvals tables, one parameter: the approval's id) that a verify must
// report, each with the approval of ApprovalTrace it applies to.
func ApprovalEdits(f ApprovalTrace) []struct{ Name, SQL, ID string } {
	return []struct{ Name, SQL, ID string }{
		{"denied-to-approved", `UPDATE approvals SET state = 'approved' WHERE id = $1`, f.Denied},
		{"decided-by", `UPDATE approvals SET decided_by = 'mallory' WHERE id = $1`, f.Denied},
		{"pending-to-approved", `UPDATE approvals SET state = 'approved', decided_by = 'mallory', decided_at = 1 WHERE id = $1`, f.Pending},
		{"decided-back-to-pending", `UPDATE approvals SET state = 'pending', decided_by = '', decided_at = 0, decision_record_id = '' WHERE id = $1`, f.Denied},
		{"use-undone", `UPDATE approvals SET used_at = 0, used_record_id = '' WHERE id = $1`, f.Used},
	}
}
