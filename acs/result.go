package acs

import (
	"context"
	"strings"

	"github.com/wardenhq/warden/acsstate"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
)

// auditOnly are the hooks that are not decision-eligible (hooks.md): the
// step has happened, so the answer is allow whatever the policies said
// (their verdict is in the trace and the chain's entry).
var auditOnly = map[string]bool{
	catalog.MethodSubagentStop: true, catalog.MethodSkillUnload: true,
	catalog.MethodTurnEnd: true, catalog.MethodSessionEnd: true,
}

// result maps the core's outcome to an ACS result (ACS §6, §6.1) and
// returns it with the decision answered.
func (h *Handler) result(ctx context.Context, r *request, s *acsstate.Session, out *warden.Outcome) (map[string]any, string) {
	res := map[string]any{"type": "final", "acs_version": s.Version, "request_id": r.requestID}
	if s.Version == "" {
		res["acs_version"] = Version
	}
	codes := uniq(out.ReasonCodes)
	reasoning := out.Reason
	decision := out.Verdict
	switch decision {
	case warden.Abstain:
		decision = warden.Allow
	case warden.Modify:
		if mods := Modifications(r.event, r.payload, out.Payload); mods != nil {
			res["modifications"] = mods
		} else {
			decision = warden.Allow // the policies' modify changed nothing
		}
	case warden.Ask:
		if out.ApprovalID == "" {
			// §9.2: no approver to route the ask to.
			decision = warden.Deny
			codes = uniq(append([]string{ReasonApproverUnavailable}, codes...))
			reasoning = "approval required, and no approver is available: " + reasoning
		} else {
			res["ask_details"] = h.askDetails(out)
		}
	case warden.Defer:
		switch {
		case out.ApprovalID == "":
			decision = warden.Deny
			codes = uniq(append([]string{ReasonApproverUnavailable}, codes...))
			reasoning = "deferred, and nothing can resolve it: " + reasoning
		case h.deferrals(ctx, r.sessionID) >= h.opts.DeferMax:
			decision = warden.Deny
			codes = uniq(append([]string{ReasonDeferLimit}, codes...))
			reasoning = "deferred, but the session already had its deferrals (acs.defer.max_per_session): " + reasoning
		default:
			res["defer_details"] = h.deferDetails(out)
		}
	}
	if r.event == catalog.MethodPostCompact && decision != warden.Allow && decision != warden.Modify ||
		auditOnly[r.event] && decision != warden.Allow {
		codes = uniq(append([]string{ReasonNotDecisionEligible}, codes...))
		reasoning = decision.String() + " is not applicable to " + r.method + " (the step has happened); recorded: " + reasoning
		decision = warden.Allow
		delete(res, "modifications")
		delete(res, "ask_details")
		delete(res, "defer_details")
	}
	res["decision"] = decision.String()
	if reasoning == "" && decision != warden.Allow {
		reasoning = decision.String()
	}
	if reasoning != "" {
		res["reasoning"] = reasoning
	}
	if len(codes) > 0 {
		res["reason_codes"] = codes
	}
	if refs := references(out, decision); len(refs) > 0 {
		res["policy_references"] = refs
	}
	data := map[string]any{"record_id": out.RecordID}
	if out.PolicyRevision != "" {
		data["policy_revision"] = out.PolicyRevision
	}
	if out.ApprovalID != "" {
		data["approval_id"] = out.ApprovalID
	}
	if out.Verdict.String() != decision.String() && out.Verdict != warden.Abstain {
		data["decided"] = out.Verdict.String() // what the policies decided, when the answer differs
	}
	res["policy_data"] = map[string]any{"warden": data}
	res["metadata"] = map[string]any{"evaluator": "deterministic", "evaluator_version": "warden " + h.opts.Version,
		"evaluation_duration_ms": out.Latency.Milliseconds()}
	return res, res["decision"].(string)
}

// references lists the enforcing policies whose verdict is the one
// answered, in run order.
func references(out *warden.Outcome, decision warden.Verdict) []any {
	var refs []any
	seen := map[string]bool{}
	for _, rs := range out.Results {
		if rs.PolicyID == "" || rs.Mode != warden.Enforce.String() || seen[rs.PolicyID] {
			continue
		}
		if rs.Decision != out.Verdict.String() && rs.Decision != decision.String() {
			continue
		}
		seen[rs.PolicyID] = true
		ref := map[string]any{"policy_id": rs.PolicyID}
		if rs.PolicyVersion != "" {
			ref["policy_version"] = rs.PolicyVersion
		}
		refs = append(refs, ref)
	}
	return refs
}

// askDetails names the approval an ask created and where an approver
// decides it. The agent asks again with the identical step (a new
// request_id) once it is approved; it is then allowed once.
func (h *Handler) askDetails(out *warden.Outcome) map[string]any {
	approver := map[string]any{"type": "human", "id": "warden-approvers"}
	if h.opts.ApprovalsURL != "" {
		approver["endpoint"] = strings.TrimRight(h.opts.ApprovalsURL, "/") + "/approvals/" + out.ApprovalID
	}
	d := map[string]any{"approver": approver, "approval_id": out.ApprovalID,
		"retry": "submit the identical step again (a new request_id) once the approval is decided"}
	if h.opts.ApprovalWait > 0 {
		d["timeout_ms"] = h.opts.ApprovalWait.Milliseconds()
	}
	return d
}

// deferDetails: the step waits for a person (the approval named), and is
// denied if nobody decides in time.
func (h *Handler) deferDetails(out *warden.Outcome) map[string]any {
	wait := h.opts.ApprovalWait
	if wait <= 0 {
		wait = 2 * 60e9
	}
	return map[string]any{
		"reason": "pending_dependency", "resolution_method": "human_approval",
		"resolution_timeout_ms": wait.Milliseconds(), "timeout_decision": "deny", "approval_id": out.ApprovalID,
	}
}

// deferrals counts the session's answered deferrals (its chain's entries
// whose decision is defer).
func (h *Handler) deferrals(ctx context.Context, session string) int {
	n := 0
	var after int64
	for {
		es, err := h.opts.Sessions.ACSEntries(ctx, session, after, acsstate.DefaultEntries)
		if err != nil {
			return h.opts.DeferMax // cannot tell: fail closed
		}
		for _, e := range es {
			if e.Decision == warden.Defer.String() {
				n++
			}
		}
		if len(es) < acsstate.DefaultEntries {
			return n
		}
		after += int64(len(es))
	}
}

func uniq(xs []string) []string {
	if len(xs) == 0 {
		return nil
	}
	out := make([]string, 0, len(xs))
	seen := make(map[string]bool, len(xs))
	for _, x := range xs {
		if x != "" && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
