package mcpgate

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	mcpjsonrpc "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/jsonrpc"
)

// sdkCodes are the JSON-RPC codes the MCP Go SDK gives a meaning of its
// own (v1.8.0: mcp.Code*, jsonrpc.Code*, its internal jsonrpc2 errors);
// warden's deny must be none of them.
var sdkCodes = []int64{
	mcpjsonrpc.CodeParseError, mcpjsonrpc.CodeInvalidRequest, mcpjsonrpc.CodeMethodNotFound,
	mcpjsonrpc.CodeInvalidParams, mcpjsonrpc.CodeInternalError,
	mcp.CodeHeaderMismatch, mcp.CodeMissingRequiredClientCapabilities, mcp.CodeUnsupportedProtocolVersion,
	mcp.CodeURLElicitationRequired,
	-32001, -32002, -32003, -32004, -32005, -31001, // unknown, resource not found (before 1.7), closing, rejected, unsupported method
}

// TestDenyThroughGoSDK: the official MCP Go SDK client, through the stdio
// gateway and /mcp/{server} (each protocol version), surfaces a denied
// tools/call as a *jsonrpc.Error with warden's own code, whose data carries
// the reason and the id of the trace record that holds the decision.
func TestDenyThroughGoSDK(t *testing.T) {
	for _, code := range sdkCodes {
		if code == CodeDenied || code == CodeUpstream {
			t.Fatalf("warden's code %d is one the MCP Go SDK defines", code)
		}
	}
	for _, pv := range protocols {
		t.Run("stdio/protocol="+pv, func(t *testing.T) {
			e := startStdio(t, pv, nil)
			checkSDKDeny(t, e.cs, e.store)
		})
		t.Run("http/protocol="+pv, func(t *testing.T) {
			e := startHTTP(t, pv, false, nil)
			checkSDKDeny(t, e.cs, e.store)
		})
	}
}

func checkSDKDeny(t *testing.T, cs *mcp.ClientSession, st *memStore) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wire_money", Arguments: map[string]any{"text": "1000"}})
	if err == nil {
		t.Fatalf("wire_money: got %+v, want warden's deny", r)
	}
	var we *mcpjsonrpc.Error
	if !errors.As(err, &we) {
		t.Fatalf("wire_money: %T %v, want a *jsonrpc.Error", err, err)
	}
	if we.Code != jsonrpc.CodeDenied || we.Message != "denied by warden: wire transfers need approval" {
		t.Fatalf("error %d %q, want %d", we.Code, we.Message, jsonrpc.CodeDenied)
	}
	var data map[string]string
	if err := json.Unmarshal(we.Data, &data); err != nil {
		t.Fatalf("error.data %s: %v", we.Data, err)
	}
	if data["name"] != jsonrpc.NameDenied || data["reason"] != "wire transfers need approval" || data["policyId"] != "deny-wire-money" {
		t.Fatalf("error.data = %v", data)
	}
	rec := data["recordId"]
	for _, r := range st.Records() {
		if r.ID == rec {
			if r.Decision != "deny" || r.Reason != "wire transfers need approval" {
				t.Fatalf("record %s: %s %q", rec, r.Decision, r.Reason)
			}
			// The session goes on: the deny is an answer, not a broken connection.
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "after"}}); err != nil {
				t.Fatalf("echo after the deny: %v", err)
			}
			return
		}
	}
	t.Fatalf("error.data.recordId %q names no record in the trace", rec)
}
