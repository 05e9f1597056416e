package catalog

import "strings"

// CommonSessionFields are the common session fields most session-scoped AGH
// payloads carry (seed 003, "common session fields"); TurnID is added for
// turn-scoped events.
var CommonSessionFields = []string{
	"event", "timestamp", "session_id", "session_name", "session_type",
	"agent_name", "workspace_id", "workspace",
}

// Patch field sets of the AGH families, from seed 003's prose.
var (
	deny           = []string{"deny", "deny_reason"}
	sessionPatch   = []string{"session_name", "session_type", "agent_name", "workspace_id", "workspace"}
	labelsPatch    = []string{"labels"}
	toolCallPatch  = []string{"tool_name", "tool_namespace", "read_only", "tool_input", "deny", "deny_reason"}
	toolResultPat  = []string{"title", "tool_result", "error", "deny", "deny_reason"}
	contextPatch   = []string{"reason", "strategy", "context_blocks", "deny", "deny_reason"}
	messagePatch   = []string{"role", "delta_type", "text"}
	toolFields     = []string{"tool_call_id", "tool_name", "tool_namespace", "read_only", "tool_input"}
	contextFields  = []string{"reason", "strategy", "summary", "context_blocks"}
	messageFields  = []string{"role", "delta_type", "text"}
	permFields     = []string{"request_id", "action", "resource", "decision", "decision_class", "tool_input", "tool_call"}
	automationBase = []string{"event", "timestamp", "agent_name", "workspace_id"}
)

// scope says which common fields an AGH payload starts with.
type scope uint8

const (
	scopeSession scope = iota // CommonSessionFields
	scopeTurn                 // CommonSessionFields + turn_id
	scopeAuto                 // automation: event, timestamp, agent_name, workspace_id
)

// aghRow is one row of seed 003's tables plus the fields from its prose.
type aghRow struct {
	name      string
	sync      bool
	payload   string
	patch     string
	fires     string
	scope     scope
	own       []string // the event's own payload fields
	patchFlds []string
}

func cat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// aghRows is seed 003, table by table, in order.
var aghRows = []aghRow{
	// Session events: lifecycle patches set the session identity; the pre-
	// operation hooks can also deny.
	{"session.pre_create", true, "SessionPreCreatePayload", "SessionCreatePatch", "Before AGH creates a session record.", scopeSession, nil, cat(sessionPatch, deny)},
	{"session.post_create", true, "SessionPostCreatePayload", "SessionPostCreatePatch", "After AGH creates a session record.", scopeSession, nil, sessionPatch},
	{"session.pre_resume", true, "SessionPreResumePayload", "SessionPreResumePatch", "Before AGH resumes an existing session.", scopeSession, nil, cat(sessionPatch, deny)},
	{"session.post_resume", true, "SessionPostResumePayload", "SessionPostResumePatch", "After AGH resumes an existing session.", scopeSession, nil, sessionPatch},
	{"session.pre_stop", true, "SessionPreStopPayload", "SessionPreStopPatch", "Before AGH stops a session.", scopeSession, nil, cat(sessionPatch, deny)},
	{"session.post_stop", true, "SessionPostStopPayload", "SessionPostStopPatch", "After AGH stops a session.", scopeSession, nil, sessionPatch},
	// Input and prompt events.
	{"input.pre_submit", true, "InputPreSubmitPayload", "InputPreSubmitPatch", "Before a user message is submitted to the agent turn.", scopeTurn, []string{"message", "context_blocks"}, cat([]string{"message", "context_blocks"}, deny)},
	{"prompt.post_assemble", true, "PromptPayload", "PromptPatch", "After AGH assembles the final prompt and before it reaches the agent.", scopeTurn, []string{"input_class", "prompt", "context_blocks"}, cat([]string{"prompt", "context_blocks"}, deny)},
	// Event persistence: observation hooks whose patch accepts labels.
	{"event.pre_record", false, "EventPreRecordPayload", "EventPreRecordPatch", "Before an ACP/runtime event is persisted.", scopeSession, []string{"record_type", "sequence", "content"}, labelsPatch},
	{"event.post_record", false, "EventPostRecordPayload", "EventPostRecordPatch", "After an ACP/runtime event is persisted.", scopeSession, []string{"record_type", "sequence", "content"}, labelsPatch},
	// Automation: pre-fire can replace the prompt or cancel; the rest observe.
	{"automation.job.pre_fire", true, "AutomationJobPreFirePayload", "AutomationFirePatch", "Before a scheduled or manually triggered job dispatches.", scopeAuto, []string{"job_id", "job_name", "prompt", "schedule", "attempt"}, []string{"prompt", "cancel"}},
	{"automation.job.post_fire", false, "AutomationJobPostFirePayload", "AutomationObservationPatch", "After a job hands work to a session or run.", scopeAuto, []string{"job_id", "job_name", "session_id"}, nil},
	{"automation.trigger.pre_fire", true, "AutomationTriggerPreFirePayload", "AutomationFirePatch", "Before a trigger dispatches an automation run.", scopeAuto, []string{"prompt"}, []string{"prompt", "cancel"}},
	{"automation.trigger.post_fire", false, "AutomationTriggerPostFirePayload", "AutomationObservationPatch", "After a trigger hands work to a session or run.", scopeAuto, []string{"session_id"}, nil},
	{"automation.run.completed", false, "AutomationRunCompletedPayload", "AutomationObservationPatch", "After an automation run completes successfully.", scopeAuto, nil, nil},
	{"automation.run.failed", false, "AutomationRunFailedPayload", "AutomationObservationPatch", "After an automation run fails.", scopeAuto, []string{"error"}, nil},
	// Coordinator.
	{"coordinator.pre_spawn", true, "CoordinatorPreSpawnPayload", "CoordinatorSpawnPatch", "Before AGH creates a managed coordinator session.", scopeSession, []string{"provider", "model"}, []string{"deny", "deny_reason", "agent_name", "provider", "model"}},
	{"coordinator.spawned", true, "CoordinatorSpawnedPayload", "CoordinatorObservationPatch", "After a managed coordinator session is created.", scopeSession, nil, nil},
	{"coordinator.decision", true, "CoordinatorDecisionPayload", "CoordinatorObservationPatch", "When a coordinator records a semantic coordination decision.", scopeSession, nil, nil},
	{"coordinator.stopped", true, "CoordinatorStoppedPayload", "CoordinatorObservationPatch", "After a managed coordinator session stops.", scopeSession, nil, nil},
	{"coordinator.failed", true, "CoordinatorFailedPayload", "CoordinatorObservationPatch", "After coordinator bootstrap or lifecycle handling fails.", scopeSession, nil, nil},
	// Task run (the raw lease token never appears in these payloads).
	{"task.run.enqueued", true, "TaskRunEnqueuedPayload", "TaskRunObservationPatch", "After a task run is enqueued and its audit event is committed.", scopeSession, nil, nil},
	{"task.run.pre_claim", true, "TaskRunPreClaimPayload", "TaskRunPreClaimPatch", "Before a task-run claim transaction commits.", scopeSession, []string{"required_capabilities", "priority_min"}, []string{"deny", "deny_reason", "required_capabilities", "priority_min"}},
	{"task.run.post_claim", true, "TaskRunPostClaimPayload", "TaskRunObservationPatch", "After a task-run claim and audit event commit.", scopeSession, nil, nil},
	{"task.run.lease_extended", true, "TaskRunLeaseExtendedPayload", "TaskRunObservationPatch", "After a token-fenced heartbeat extends a task-run lease.", scopeSession, nil, nil},
	{"task.run.lease_expired", true, "TaskRunLeaseExpiredPayload", "TaskRunObservationPatch", "After a task-run lease reaches expiry.", scopeSession, nil, nil},
	{"task.run.lease_recovered", true, "TaskRunLeaseRecoveredPayload", "TaskRunObservationPatch", "After lease recovery requeues or finalizes expired work.", scopeSession, nil, nil},
	{"task.run.released", true, "TaskRunReleasedPayload", "TaskRunObservationPatch", "After a token-fenced task-run lease release.", scopeSession, nil, nil},
	{"task.run.completed", true, "TaskRunCompletedPayload", "TaskRunObservationPatch", "After a token-fenced task-run completion.", scopeSession, nil, nil},
	{"task.run.failed", true, "TaskRunFailedPayload", "TaskRunObservationPatch", "After a token-fenced task-run failure.", scopeSession, nil, nil},
	// Spawn.
	{"spawn.pre_create", true, "SpawnPreCreatePayload", "SpawnCreatePatch", "Before AGH creates a child session from an agent-facing request.", scopeSession, []string{"spawn_role", "ttl_seconds", "child_permissions"}, []string{"deny", "deny_reason", "agent_name", "spawn_role", "ttl_seconds", "child_permissions"}},
	{"spawn.created", true, "SpawnCreatedPayload", "SpawnObservationPatch", "After a child session is created.", scopeSession, nil, nil},
	{"spawn.parent_stopped", true, "SpawnParentStoppedPayload", "SpawnObservationPatch", "When parent-stop cleanup reaps a child session.", scopeSession, nil, nil},
	{"spawn.ttl_expired", true, "SpawnTTLExpiredPayload", "SpawnObservationPatch", "When TTL expiry reaps a child session.", scopeSession, nil, nil},
	{"spawn.reaped", true, "SpawnReapedPayload", "SpawnObservationPatch", "After child-session reap cleanup completes.", scopeSession, nil, nil},
	// Agent process.
	{"agent.pre_start", true, "AgentPreStartPayload", "AgentStartPatch", "Before AGH starts the ACP agent process.", scopeSession, []string{"command", "args", "cwd"}, []string{"command", "args", "cwd", "deny", "deny_reason"}},
	{"agent.spawned", true, "AgentSpawnedPayload", "AgentSpawnedPatch", "After the agent process is spawned.", scopeSession, nil, labelsPatch},
	{"agent.crashed", true, "AgentCrashedPayload", "AgentCrashedPatch", "When the agent process exits unexpectedly.", scopeSession, nil, labelsPatch},
	{"agent.stopped", true, "AgentStoppedPayload", "AgentStoppedPatch", "After the agent process stops.", scopeSession, nil, labelsPatch},
	// Turn and message: a turn deny stops the chain; message patches rewrite.
	{"turn.start", true, "TurnStartPayload", "TurnStartPatch", "When an agent turn starts.", scopeTurn, nil, cat(labelsPatch, deny)},
	{"turn.end", true, "TurnEndPayload", "TurnEndPatch", "When an agent turn ends.", scopeTurn, nil, cat(labelsPatch, deny)},
	{"message.start", true, "MessageStartPayload", "MessageStartPatch", "When a streamed message begins.", scopeTurn, messageFields, messagePatch},
	{"message.delta", false, "MessageDeltaPayload", "MessageDeltaPatch", "For streaming message deltas.", scopeTurn, messageFields, messagePatch},
	{"message.end", true, "MessageEndPayload", "MessageEndPatch", "When a streamed message finishes.", scopeTurn, messageFields, messagePatch},
	// Tool events.
	{"tool.pre_call", true, "ToolPreCallPayload", "ToolCallPatch", "Before a tool call executes.", scopeTurn, toolFields, toolCallPatch},
	{"tool.post_call", true, "ToolPostCallPayload", "ToolResultPatch", "After a tool call succeeds.", scopeTurn, cat(toolFields, []string{"title", "tool_result"}), toolResultPat},
	{"tool.post_error", true, "ToolPostErrorPayload", "ToolPostErrorPatch", "After a tool call fails.", scopeTurn, cat(toolFields, []string{"title", "error"}), toolResultPat},
	// Permission events: no patch may turn a blocked decision into an allow.
	{"permission.request", true, "PermissionRequestPayload", "PermissionRequestPatch", "Before a permission decision resolves.", scopeTurn, permFields, []string{"decision", "decision_class", "reason", "deny", "deny_reason"}},
	{"permission.resolved", false, "PermissionResolvedPayload", "PermissionResolvedPatch", "After a permission decision resolves.", scopeTurn, cat(permFields, []string{"reason"}), labelsPatch},
	{"permission.denied", false, "PermissionDeniedPayload", "PermissionDeniedPatch", "After a permission denial resolves.", scopeTurn, cat(permFields, []string{"reason"}), labelsPatch},
	// Context compaction.
	{"context.pre_compact", true, "ContextPreCompactPayload", "ContextPreCompactPatch", "Before AGH compacts conversation context.", scopeTurn, contextFields, contextPatch},
	{"context.post_compact", true, "ContextPostCompactPayload", "ContextPostCompactPatch", "After AGH compacts conversation context.", scopeTurn, contextFields, contextPatch},
}

// aghEvents turns aghRows into catalog entries. The family is the name up to
// its first dot ("task" for task.run.*); payload fields are the scope's
// common fields followed by the event's own, without duplicates.
func aghEvents() []Event {
	out := make([]Event, 0, len(aghRows))
	for _, r := range aghRows {
		var base []string
		switch r.scope {
		case scopeSession:
			base = CommonSessionFields
		case scopeTurn:
			base = cat(CommonSessionFields, []string{"turn_id"})
		case scopeAuto:
			base = automationBase
		}
		family, _, _ := strings.Cut(r.name, ".")
		out = append(out, Event{
			Name: r.name, Family: family, Source: SourceAGH, Sync: r.sync,
			Payload: r.payload, Patch: r.patch,
			PayloadFields: dedupe(cat(base, r.own)), PatchFields: cat(r.patchFlds),
			Fires: r.fires,
		})
	}
	return out
}

func dedupe(s []string) []string {
	seen := make(map[string]bool, len(s))
	out := s[:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
