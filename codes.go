package warden

// Reason codes the core itself writes into an Outcome (policy ids are the
// other reason codes), and the marks it puts on a Result's Guardian, Mode
// and Kind. They are part of the trace record (docs/runs-api.md).
const (
	// CodeApprovalRequired: a step asked and no approval answered it.
	CodeApprovalRequired = "approval_required"
	// CodeGuardianError: a step of the chain failed; its failure policy
	// decided.
	CodeGuardianError = "guardian_error"
	// CodeTraceUnavailable: the decision could not be recorded, so it is
	// not given (fail closed).
	CodeTraceUnavailable = "trace_unavailable"
	// CodeDefault: no policy matched; the chain's default decided.
	CodeDefault = "default_decision"

	// CodeApprovalGranted: an approver let the step through.
	CodeApprovalGranted = "approval_granted"
	// CodeApprovalDenied: an approver refused the step.
	CodeApprovalDenied = "approval_denied"
	// CodeApprovalTimeout: nobody decided within approvals.wait.
	CodeApprovalTimeout = "approval_timeout"
	// CodeApprovalUnavailable: the approval could not be stored; the step
	// is refused (fail closed).
	CodeApprovalUnavailable = "approval_unavailable"
	// CodeApprovalCovered: a policy's ask was covered by the approval of
	// the request the step answers (Envelope.Approved).
	CodeApprovalCovered = "approval_covered"

	// KindLabels is the Kind of the result a record gets when its step
	// added labels to its session (Guardian "session"; Labels lists them).
	KindLabels = "labels"

	// A shadow set is a candidate policy set that decides every event
	// beside the live one and is never applied (`serve --shadow-policy`,
	// docs/testing-policies.md): its results are appended to the record only, marked
	// ModeShadow; the last is the set's summary (KindShadowSet), whose
	// Decision is the verdict the candidate set would have given.

	// ModeShadow is the Mode of every result of a shadow set.
	ModeShadow = "shadow"
	// GuardianShadow is the Guardian of every result of a shadow set.
	GuardianShadow = "shadow"
	// KindShadowSet is the Kind of a shadow set's summary result: its
	// combined verdict (Decision), the policy that decided it (PolicyID,
	// PolicyVersion; none when its default applied), the set's revision
	// (PolicyRevision) and, when the shadow set could not decide, Error.
	KindShadowSet = "shadow_set"
)
