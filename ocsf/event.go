// Package ocsf renders warden's trace records as OCSF 1.5 events per the
// ACS-Trace mapping (ACS trace/ocsf-mapping.json): each decided step as an
// event of its step's class (Process Activity for a tool call,
// Authentication for a session's start and end, ...), and each decision
// other than allow also as a Detection Finding (2004). Events are built
// from the record as stored — already redacted — never from the live
// payload. A Sink appends them to a rotated JSONL file without ever
// blocking a decision; `warden runs -o ocsf` prints them from the trace.
// See docs/observability.md.
package ocsf

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
)

// Version is the OCSF schema version the events declare.
const Version = "1.5.0"

// Event is one OCSF event, a JSON object.
type Event = map[string]any

// class is an OCSF class an ACS step maps to.
type class struct {
	uid          int
	name         string
	categoryUID  int
	categoryName string
}

var (
	processActivity     = class{1007, "Process Activity", 1, "System Activity"}
	moduleActivity      = class{1005, "Module Activity", 1, "System Activity"}
	authentication      = class{3002, "Authentication", 3, "Identity & Access Management"}
	applicationActivity = class{6002, "Application Activity", 6, "Application Activity"}
	datastoreActivity   = class{6005, "Datastore Activity", 6, "Application Activity"}
	inventoryInfo       = class{5001, "Inventory Info", 5, "Discovery"}
	deviceInventoryInfo = class{5001, "Device Inventory Info", 5, "Discovery"}
	detectionFinding    = class{2004, "Detection Finding", 2, "Findings"}
)

// stepClass is ocsf-mapping.json's step_to_class, with the activity of
// each step (the mapping's activity_id where it gives one).
var stepClass = map[string]struct {
	class    class
	activity int
}{
	"steps/sessionStart":           {authentication, 1},
	"steps/sessionEnd":             {authentication, 2},
	"steps/subagentStart":          {authentication, 1},
	"steps/subagentStop":           {authentication, 2},
	"steps/userMessage":            {applicationActivity, 99},
	"steps/agentResponse":          {applicationActivity, 99},
	"steps/agentTrigger":           {applicationActivity, 99},
	"steps/turnStart":              {applicationActivity, 3},
	"steps/turnEnd":                {applicationActivity, 4},
	"steps/toolCallRequest":        {processActivity, 1},
	"steps/toolCallResult":         {processActivity, 2},
	"steps/knowledgeRetrieval":     {datastoreActivity, 4},
	"steps/memoryStore":            {datastoreActivity, 0}, // from the payload's operation
	"steps/memoryContextRetrieval": {datastoreActivity, 1},
	"steps/preCompact":             {datastoreActivity, 99},
	"steps/postCompact":            {datastoreActivity, 99},
	"steps/skillRegister":          {deviceInventoryInfo, 1},
	"steps/skillLoad":              {moduleActivity, 1},
	"steps/skillUnload":            {moduleActivity, 2},
	"agbom/snapshot":               {inventoryInfo, 1},
	"agbom/changed":                {inventoryInfo, 1},
}

// activityNames names each class's activities used here.
var activityNames = map[int]map[int]string{
	1007: {1: "Launch", 2: "Terminate", 99: "Other"},
	1005: {1: "Load", 2: "Unload"},
	3002: {1: "Logon", 2: "Logoff"},
	6002: {3: "Start", 4: "Stop", 99: "Other"},
	6005: {1: "Read", 2: "Update", 4: "Query", 6: "Create", 7: "Delete", 99: "Other"},
	5001: {1: "Log"},
	2004: {1: "Create"},
}

// Severity is ocsf-mapping.json's severity_mapping: the severity_id of a
// disposition.
var Severity = map[string]int{"allow": 1, "modify": 2, "ask": 3, "defer": 3, "deny": 4}

var severityNames = map[int]string{1: "Informational", 2: "Low", 3: "Medium", 4: "High"}

// classOf returns the class and activity of a record's step. A step the
// mapping does not name is a Process Activity when it calls or answers a
// tool (a wrapped MCP tools/call, an A2A or hook tool event), else an
// Application Activity (activity Other).
func classOf(r *audit.Record, p map[string]any) (class, int) {
	if c, ok := stepClass[r.Event]; ok {
		if r.Event == "steps/memoryStore" {
			switch str(p, "operation") {
			case "create":
				return c.class, 6
			case "update":
				return c.class, 2
			case "delete":
				return c.class, 7
			}
			return c.class, 99
		}
		return c.class, c.activity
	}
	if r.Tool != "" {
		if r.Direction == warden.Inbound {
			return processActivity, 2
		}
		return processActivity, 1
	}
	return applicationActivity, 99
}

// Events returns the OCSF events of one record: its step's event, then a
// Detection Finding when the decision is not allow.
func Events(r *audit.Record) []Event {
	var p map[string]any
	if len(r.Input) > 0 {
		_ = json.Unmarshal(r.Input, &p) // a record's input is a JSON object; else no payload facts
	}
	pv := provenance(r, p)
	c, act := classOf(r, p)
	ev := base(r, c, act)
	ev["status_id"], ev["status"] = status(r.Decision)
	if r.Reason != "" {
		ev["message"] = r.Reason
	}
	actor := actorOf(r)
	device := Event{"type_id": 99, "type": "AI Agent", "name": or(r.AgentID, "unknown")}
	if r.AgentID != "" {
		device["uid"] = r.AgentID
	}
	switch c.uid {
	case 1007:
		ev["actor"], ev["device"] = actor, device
		name := or(r.Tool, str(p, "tool", "name"), "unknown")
		proc := Event{"name": name, "cmd_line": r.Event + ":" + name}
		if id := or(r.StepID, r.RequestID); id != "" {
			proc["uid"] = id
		}
		ev["process"] = proc
	case 1005:
		ev["actor"], ev["device"] = actor, device
		ev["module"] = Event{"name": or(str(p, "skill", "id"), str(p, "skill_id"), "unknown"), "type": "skill",
			"load_type_id": 99, "load_type": "Skill"}
	case 3002:
		ev["actor"] = actor
		ev["user"] = actor["user"]
		ev["session"] = actor["session"]
		ev["is_mfa"] = false
		ev["auth_protocol_id"], ev["auth_protocol"] = 99, "ACS"
	case 6002:
		ev["actor"] = actor
		ev["app"] = Event{"name": or(r.AgentID, "agent"), "uid": r.AgentID, "vendor_name": "unknown"}
	case 6005:
		ev["actor"] = actor
		ev["type_id"], ev["type"] = 99, "AI agent datastore"
		ev["database"] = Event{"name": or(str(p, "memory_store", "name"), str(p, "source", "name"), "unknown"),
			"type_id": 99, "type": or(str(p, "source", "type"), "memory")}
	case 5001:
		ev["actor"], ev["device"] = actor, device
	}
	ev["unmapped"] = Event{"acs": acsFacts(r, p, pv)}
	if en := enrichments(pv); len(en) > 0 {
		ev["enrichments"] = en
	}
	out := []Event{ev}
	if r.Decision != "" && r.Decision != "allow" {
		out = append(out, finding(r, pv))
	}
	return out
}

// base is what every event carries: the OCSF base event fields.
func base(r *audit.Record, c class, act int) Event {
	sev := Severity[r.Decision]
	if sev == 0 {
		sev = 1
	}
	an := activityNames[c.uid][act]
	if an == "" {
		an = "Other"
	}
	md := Event{
		"version":  Version,
		"product":  Event{"name": "warden", "vendor_name": "wardenhq", "feature": Event{"name": r.Surface}},
		"uid":      r.ID,
		"log_name": "warden trace",
	}
	if r.SessionID != "" {
		md["correlation_uid"] = r.SessionID
	}
	return Event{
		"category_uid": c.categoryUID, "category_name": c.categoryName,
		"class_uid": c.uid, "class_name": c.name,
		"activity_id": act, "activity_name": an,
		"type_uid": c.uid*100 + act, "type_name": c.name + ": " + an,
		"time":        r.Time.UnixMilli(),
		"severity_id": sev, "severity": severityNames[sev],
		"metadata": md,
	}
}

func status(decision string) (int, string) {
	switch decision {
	case "allow", "modify":
		return 1, "Success"
	case "deny":
		return 2, "Failure"
	}
	return 99, "Other" // held: ask, defer
}

// actorOf is the agent that took the step, as OCSF's AI-agent convention
// has it (user type_id 99 "AI Agent"), in its session.
func actorOf(r *audit.Record) Event {
	a := Event{"user": Event{"uid": or(r.AgentID, "unknown"), "name": or(r.AgentID, "unknown"), "type_id": 99, "type": "AI Agent"}}
	if r.SessionID != "" {
		a["session"] = Event{"uid": r.SessionID}
	}
	if r.Caller != "" {
		a["app_name"] = r.Caller
	}
	return a
}

// acsFacts is unmapped.acs: the ACS facts OCSF has no field for.
func acsFacts(r *audit.Record, p map[string]any, pv []warden.Provenance) Event {
	step := Event{"type": strings.TrimPrefix(r.Event, "steps/"), "event": r.Event, "surface": r.Surface}
	for k, v := range map[string]string{"id": r.StepID, "turn_id": r.TurnID, "request_id": r.RequestID, "direction": r.Direction} {
		if v != "" {
			step[k] = v
		}
	}
	acs := Event{"step": step, "decision": r.Decision, "record_id": r.ID}
	if r.Tool != "" {
		tool := Event{"id": r.Tool}
		if c := str(p, "capability"); c != "" {
			tool["capability"] = c
		}
		acs["tool"] = tool
	}
	if r.SessionID != "" {
		acs["session_id"] = r.SessionID
	}
	if len(r.ReasonCodes) > 0 {
		acs["reason_codes"] = r.ReasonCodes
	}
	if refs := policyRefs(r); len(refs) > 0 {
		acs["policy_references"] = refs
	}
	if r.Tenant != "" {
		acs["tenant_id"] = r.Tenant
	}
	if len(pv) > 0 {
		acs["provenance"] = provenanceObjects(pv)
	}
	return acs
}

// policyRefs lists the policies that decided (the record's and each
// deciding result's), without repeats.
func policyRefs(r *audit.Record) []Event {
	var out []Event
	var seen []string
	add := func(id, version string) {
		if id == "" || slices.Contains(seen, id) {
			return
		}
		seen = append(seen, id)
		ref := Event{"policy_id": id}
		if version != "" {
			ref["policy_version"] = version
		}
		out = append(out, ref)
	}
	add(r.PolicyID, r.PolicyVersion)
	for _, res := range r.Results {
		if res.Mode != "shadow" && res.Decision != "" && res.Decision != "abstain" && res.Decision != "allow" {
			add(res.PolicyID, res.PolicyVersion)
		}
	}
	return out
}

// finding is the Detection Finding (2004) of a decision other than allow,
// with the mapping's required fields: finding.title, finding.uid,
// evidences, verdict_id. OCSF 1.5 names the finding object finding_info;
// the event carries both names.
func finding(r *audit.Record, pv []warden.Provenance) Event {
	ev := base(r, detectionFinding, 1)
	ev["metadata"].(Event)["uid"] = r.ID + ":finding" // the step's event has the record's id
	ev["status_id"], ev["status"] = 1, "New"
	title := "Step " + r.Decision + ": " + r.Event
	if r.Tool != "" {
		title += " " + r.Tool
	}
	info := Event{"uid": r.ID, "title": title, "types": []string{"ACS " + r.Decision}}
	if r.Reason != "" {
		info["desc"] = r.Reason
	}
	if r.PolicyID != "" {
		info["analytic"] = Event{"uid": r.PolicyID, "name": r.PolicyID, "type_id": 1, "type": "Rule"}
	}
	ev["finding_info"] = info
	ev["finding"] = Event{"uid": r.ID, "title": title}
	evidence := Event{"data": Event{"event": r.Event, "record_id": r.ID, "surface": r.Surface}}
	if r.Tool != "" {
		evidence["data"].(Event)["tool"] = r.Tool
	}
	ev["evidences"] = []Event{evidence}
	ev["verdict_id"], ev["verdict"] = verdict(r.Decision)
	ev["actor"] = actorOf(r)
	if r.Reason != "" {
		ev["message"] = r.Reason
	}
	facts := Event{"decision": r.Decision, "evaluator": audit.Evaluator(r.Results), "record_id": r.ID}
	if r.SessionID != "" {
		facts["session_id"] = r.SessionID
	}
	if id := or(r.StepID, r.RequestID); id != "" {
		facts["step_id"] = id
	}
	if len(r.ReasonCodes) > 0 {
		facts["reason_codes"] = r.ReasonCodes
	}
	if refs := policyRefs(r); len(refs) > 0 {
		facts["policy_references"] = refs
	}
	if r.ApprovalID != "" {
		facts["approval_id"] = r.ApprovalID
	}
	ev["unmapped"] = Event{"acs": facts}
	if en := enrichments(pv); len(en) > 0 {
		ev["enrichments"] = en
	}
	return ev
}

// verdict is the OCSF verdict of a disposition: a refused or changed step
// is a Security Risk, a held one Suspicious.
func verdict(decision string) (int, string) {
	switch decision {
	case "deny", "modify":
		return 8, "Security Risk"
	case "ask", "defer":
		return 4, "Suspicious"
	}
	return 99, "Other"
}
