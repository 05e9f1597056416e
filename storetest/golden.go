package storetest

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/audit"
)

// GoldenKey is the chain key of the golden records.
var GoldenKey = bytes.Repeat([]byte{7}, 32)

// GoldenHash is GoldenRecord's hash as the first record of a trace chained
// under GoldenKey, computed by the SQLite and PostgreSQL stores before
// records had sealed values (SQLite schema 16, PostgreSQL schema 7, commit
// c2210af): a record without sealed values must still hash exactly so,
// in both stores.
const GoldenHash = "caeeddf9f0faf4c90b1193ff310025240a61ef798dbc52951526ba228127c440"

// GoldenRecord is a fixed record with a redaction mark in its input.
func GoldenRecord(id string) *audit.Record {
	return &audit.Record{
		ID: id, Time: time.Date(2026, 11, 21, 10, 0, 0, 123456000, time.UTC),
		Event: "steps/toolCallRequest", Surface: "aos", RequestID: "req-1", AgentID: "agent-1",
		SessionID: "sess-1", TurnID: "turn-1", StepID: "step-1", Decision: "modify",
		Reason: "redacted: email", ReasonCodes: []string{"redacted"}, PolicyID: "redact-pii", PolicyVersion: "3",
		Results:   []warden.Result{{Guardian: "policy", PolicyID: "redact-pii", Decision: "modify", Mode: "enforce", LatencyUS: 7}},
		LatencyUS: 21, Input: json.RawMessage(`{"to":"[REDACTED:email:e87ea35c]"}`),
		PolicyRevision: "rev", Caller: "agent", Tenant: "acme", Tool: "send_email",
	}
}

// GoldenSealed is sealed originals for GoldenRecord's mark (an envelope's
// shape; what the stores keep is the bytes).
var GoldenSealed = json.RawMessage(`{"email:e87ea35c":"AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAQ-_Wq3v"}`)
