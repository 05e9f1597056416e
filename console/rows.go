package console

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
)

// row is one decision as the decisions table and the session timeline show
// it.
type row struct {
	ID                  string
	Time                time.Time
	Event, Surface      string
	Direction           string
	Method              string // the JSON-RPC method of a protocol message, else the event
	Tool, ToolServer    string
	Decision, Reason    string
	PolicyID, PolicyVer string
	SessionID, AgentID  string
	LatencyUS           int64
	ApprovalID          string
	Caller, Tenant      string
	Results             []warden.Result
	// ShadowOtherwise is the shadow set's verdict when it differs from
	// Decision ("" when it agrees, or there is none).
	ShadowOtherwise      string
	InputExcerpt         string
	protocol, isResponse bool
}

// inputExcerpt is how much of a step's input the timeline shows.
const inputExcerpt = 240

// rowOf is rec as a row: for a protocol message (MCP, A2A) the JSON-RPC
// method from its input (or "result"/"error" for a response) and the tool
// from the views the policies saw, not the catalog event with an id.
func rowOf(rec *audit.Record) row {
	r := row{ID: rec.ID, Time: rec.Time, Event: rec.Event, Surface: rec.Surface, Direction: rec.Direction,
		Method: rec.Event, Decision: rec.Decision, Reason: rec.Reason, PolicyID: rec.PolicyID,
		PolicyVer: rec.PolicyVersion, SessionID: rec.SessionID, AgentID: rec.AgentID, LatencyUS: rec.LatencyUS,
		ApprovalID: rec.ApprovalID, Caller: rec.Caller, Tenant: rec.Tenant, Results: rec.Results}
	if rec.ShadowDisagrees() {
		r.ShadowOtherwise = rec.ShadowDecision()
	}
	if rec.Surface == warden.SurfaceMCP || rec.Surface == warden.SurfaceA2A {
		r.protocol = true
		var m struct {
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(rec.Input, &m) == nil {
			switch {
			case m.Method != "":
				r.Method = m.Method
			case m.Error != nil:
				r.Method, r.isResponse = "error", true
			case m.Result != nil:
				r.Method, r.isResponse = "result", true
			}
		}
	}
	var v struct {
		Tool struct {
			Name   string `json:"name"`
			Server string `json:"server"`
		} `json:"tool"`
	}
	if len(rec.Views) > 0 && json.Unmarshal(rec.Views, &v) == nil {
		r.Tool, r.ToolServer = v.Tool.Name, v.Tool.Server
	}
	if rec.Tool != "" {
		r.Tool = rec.Tool
	}
	return r
}

// excerpt is the start of a record's input on one line (the timeline).
func excerpt(input json.RawMessage) string {
	if len(input) > 16*inputExcerpt {
		input = input[:16*inputExcerpt]
	}
	return cut(strings.Join(strings.Fields(string(input)), " "), inputExcerpt)
}
