package audit

import (
	"time"

	"github.com/wardenhq/warden"

	"github.com/google/uuid"
	"github.com/wardenhq/warden/internal/jsonappend"
)

// RecordTimeout bounds how long a decision waits for its trace record to
// commit before it fails closed.
const RecordTimeout = 10 * time.Second

// NewRecord builds the trace record of outcome out for ev.
func NewRecord(ev *warden.Event, out *warden.Outcome, now time.Time) *Record {
	id, err := uuid.NewV7()
	if err != nil {
		id = uuid.New()
	}
	r := &Record{
		ID: id.String(), Time: now.UTC(), Event: ev.Name, Surface: ev.Surface,
		Direction: ev.Direction, RequestID: ev.RequestID, AgentID: ev.Agent.ID,
		SessionID: ev.SessionID, TurnID: ev.TurnID, StepID: ev.StepID,
		Decision: out.Verdict.String(), Reason: out.Reason, ReasonCodes: out.ReasonCodes,
		PolicyID: out.PolicyID, PolicyVersion: out.PolicyVersion, Results: out.Results,
		LatencyUS: out.Latency.Microseconds(), Input: ev.Raw,
		PolicyRevision: out.PolicyRevision, Views: ev.ViewsJSON(),
		Caller: ev.Principal.Name, Tenant: ev.Principal.Tenant, Tool: ev.Tool.Name,
	}
	if r.Results == nil {
		r.Results = []warden.Result{}
	}
	// marshalJSON writes json.Marshal's bytes (recordjson.go).
	if r.Input == nil {
		r.Input = jsonappend.Marshal(ev.Payload)
	}
	if out.Verdict == warden.Modify && out.Payload != nil {
		r.Output = jsonappend.Marshal(out.Payload)
	}
	return r
}
