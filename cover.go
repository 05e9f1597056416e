package warden

// Cover names one ask that an approver approved: the guardian and the
// policy that asked (PolicyID is "" when a hook asked, not a policy).
//
// An approval covers the step asked about and its answer: a gateway keeps
// the covers of an approved request beside it (Envelope.Approved of the
// response), and when the response is decided the same guardian's policy
// does not ask again. Every other policy still decides the response, and a
// policy whose condition reads direction (it chose the direction it asks
// about) asks again: see docs/approvals.md.
type Cover struct {
	Guardian string `json:"guardian"`
	PolicyID string `json:"policy_id"`
}

// Covers returns the asks an approval let through in out: every enforced
// result that asked or deferred, when out is a step an approver approved
// (Approved); nil otherwise. A surface keeps them with the request, for
// its response's Envelope.Approved.
func (o Outcome) Covers() []Cover {
	if o.ApprovalID == "" || o.Verdict.Holds() || o.Verdict == Deny || !approvalGranted(o.ReasonCodes) {
		return nil
	}
	var cs []Cover
	for _, r := range o.Results {
		if (r.Decision != Ask.String() && r.Decision != Defer.String()) || r.Mode != Enforce.String() || r.Error != "" || r.Refused != "" {
			continue
		}
		c := Cover{Guardian: r.Guardian, PolicyID: r.PolicyID}
		if !coversHas(cs, c) {
			cs = append(cs, c)
		}
	}
	return cs
}

// Covered reports whether the guardian's policy policyID asked about the
// request this step answers, and an approver approved it.
func (e *Envelope) Covered(guardian, policyID string) bool {
	return coversHas(e.Approved, Cover{Guardian: guardian, PolicyID: policyID})
}

func coversHas(cs []Cover, c Cover) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

func approvalGranted(codes []string) bool {
	for _, c := range codes {
		if c == CodeApprovalGranted {
			return true
		}
	}
	return false
}
