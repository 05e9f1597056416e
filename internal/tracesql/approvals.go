package tracesql

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// # The approvals against the trace
//
// An approval's state lives in the approvals table, outside the hash
// chain, and it matters: an approved, unused approval lets the identical
// step through once. Every change of that state is also a trace record,
// though: the ask (the approval's record_id), the decision (surface
// "approval", decision allow or deny with the reason code
// approval_granted, approval_denied or approval_timeout, the approver as
// caller; decision_record_id), and the retry an approval answered at once
// let through (used_record_id). Verify collects the records that name an
// approval (Add) while it walks the chain, and then checks each approval
// against them (Check): an approval whose state, approver or use the
// trace does not back was changed outside the chain.
//
// What cannot be checked is said, not guessed: an approval whose ask
// record is no longer in the trace (retention deleted it, and may have
// deleted its decision's too) is counted as unchecked.

// ApprovalRecord is what Check needs of a trace record that names an
// approval (runs.approval_id).
type ApprovalRecord struct {
	ID, Surface, Decision, Caller string
	Codes                         []byte // the stored reason codes' JSON
}

// ApprovalRow is what Check needs of an approvals row.
type ApprovalRow struct {
	ID, State, DecidedBy       string
	RecordID, DecisionRecordID string
	UsedRecordID               string
	Hold                       bool
	UsedAt                     int64
}

// Approvals collects the trace's records that name an approval and checks
// the approvals table against them. The zero value is ready to use.
type Approvals struct {
	recs map[string][]ApprovalRecord
	// Checked and Unchecked count the approvals Check was given: checked
	// against the trace, or whose ask record is no longer in it.
	Checked, Unchecked int64
}

// Add notes record r, which names approval id.
func (c *Approvals) Add(id string, r ApprovalRecord) {
	if c.recs == nil {
		c.recs = map[string][]ApprovalRecord{}
	}
	r.Codes = bytes.Clone(r.Codes)
	c.recs[id] = append(c.recs[id], r)
}

// surfaceApproval is warden.SurfaceApproval (the decision records').
const surfaceApproval = "approval"

// Check returns why approval a is not what the trace's records say, ""
// when it is (or when it cannot be checked: Unchecked).
func (c *Approvals) Check(a ApprovalRow) string {
	recs := c.recs[a.ID]
	var ask bool
	var decisions []ApprovalRecord
	for _, r := range recs {
		if r.ID == a.RecordID {
			ask = true
		}
		if r.Surface == surfaceApproval {
			decisions = append(decisions, r)
		}
	}
	if !ask {
		// Retention deleted its ask record (the oldest first): its
		// decision's may be gone too.
		c.Unchecked++
		return ""
	}
	c.Checked++
	if a.State == "pending" {
		if len(decisions) > 0 {
			d := decisions[0]
			return fmt.Sprintf("approval %s is pending in the approvals table, but trace record %s holds its decision (%s): its state was changed outside the trace", a.ID, d.ID, d.Decision)
		}
		return c.checkUse(a, recs)
	}
	var want, code string
	switch a.State {
	case "approved":
		want, code = "allow", "approval_granted"
	case "denied":
		want, code = "deny", "approval_denied"
	case "expired":
		want, code = "deny", "approval_timeout"
	default:
		return fmt.Sprintf("approval %s has state %q, which warden does not write", a.ID, a.State)
	}
	var d *ApprovalRecord
	for i := range decisions {
		if a.DecisionRecordID == "" || decisions[i].ID == a.DecisionRecordID {
			d = &decisions[i]
			break
		}
	}
	if d == nil {
		if a.DecisionRecordID != "" {
			return fmt.Sprintf("approval %s is %s, but its decision record %s is not in the trace as its decision: the approval or the record was changed", a.ID, a.State, a.DecisionRecordID)
		}
		return fmt.Sprintf("approval %s is %s by %s, but no trace record holds that decision: its state was changed outside the trace", a.ID, a.State, quoteBy(a.DecidedBy))
	}
	if d.Decision != want || !hasCode(d.Codes, code) {
		return fmt.Sprintf("approval %s is %s in the approvals table, but its decision record %s says %s (%s): its state was changed outside the trace", a.ID, a.State, d.ID, d.Decision, d.Codes)
	}
	// A caller that looked like a secret is stored redacted in the
	// record: it cannot be compared.
	if d.Caller != a.DecidedBy && !strings.Contains(d.Caller, "[REDACTED") {
		return fmt.Sprintf("approval %s was decided by %s in the approvals table, but by %s in its decision record %s: decided_by was changed outside the trace", a.ID, quoteBy(a.DecidedBy), quoteBy(d.Caller), d.ID)
	}
	return c.checkUse(a, recs)
}

// checkUse checks the use of an approval answered at once (not held): a
// retry it let through is a record naming it, other than its ask, that
// was not refused or held again.
func (c *Approvals) checkUse(a ApprovalRow, recs []ApprovalRecord) string {
	if a.Hold {
		return ""
	}
	var used *ApprovalRecord
	for i, r := range recs {
		if r.ID != a.RecordID && r.Surface != surfaceApproval && (r.Decision == "allow" || r.Decision == "modify") {
			used = &recs[i]
			if r.ID == a.UsedRecordID {
				break
			}
		}
	}
	switch {
	case used != nil && a.UsedAt == 0:
		return fmt.Sprintf("approval %s is unused in the approvals table, but trace record %s was let through by it: its use was undone outside the trace", a.ID, used.ID)
	case a.UsedRecordID != "" && (used == nil || used.ID != a.UsedRecordID):
		return fmt.Sprintf("approval %s was used by record %s, which is not in the trace as its use", a.ID, a.UsedRecordID)
	}
	return ""
}

func quoteBy(s string) string {
	if s == "" {
		return "nobody (it expired)"
	}
	return strconv.Quote(s)
}

// hasCode reports whether the JSON array codes holds the string code.
func hasCode(codes []byte, code string) bool {
	return bytes.Contains(codes, []byte(strconv.Quote(code)))
}
