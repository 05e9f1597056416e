package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestEventsAPI(t *testing.T) {
	srv := httptest.NewServer(New(Options{}))
	t.Cleanup(srv.Close)
	list := func(query string) []map[string]any {
		t.Helper()
		code, body := get(t, srv.URL+"/api/hooks/events"+query)
		if code != http.StatusOK {
			t.Fatalf("%s: status %d: %s", query, code, body)
		}
		var evs []map[string]any
		if err := json.Unmarshal([]byte(body), &evs); err != nil {
			t.Fatalf("%s: not a JSON array: %v", query, err)
		}
		return evs
	}
	if n := len(list("")); n != 126 {
		t.Errorf("all: %d events, want 126 (AOS 25, AGH 52, Standard Agents 9, ACS 40)", n)
	}
	if n := len(list("?family=wrapped-mcp")); n != 25 {
		t.Errorf("wrapped-mcp: %d events, want 25", n)
	}
	perm := list("?family=permission&sync_only=true")
	if len(perm) != 1 || perm[0]["name"] != "permission.request" || perm[0]["sync"] != "yes" || perm[0]["source"] != "agh" {
		t.Errorf("permission sync-only: %v", perm)
	}
	if n := len(list("?family=permission&sync_only=false")); n != 3 {
		t.Errorf("permission: %d, want 3", n)
	}
	mcp := list("?family=protocols")
	if len(mcp) != 4 || mcp[0]["direction"] != "outbound" || mcp[1]["direction"] != "inbound" {
		t.Errorf("protocols: %v", mcp)
	}
	if evs := list("?family=nope"); len(evs) != 0 {
		t.Errorf("unknown family: %v", evs)
	}
	sa := list("?family=tool-execution")
	if len(sa) != 3 || sa[0]["name"] != "before_store_tool_result" {
		t.Errorf("tool-execution: %v", sa)
	}
	pf, _ := sa[0]["patch_fields"].([]any)
	if len(pf) != 1 || pf[0] != "result" {
		t.Errorf("before_store_tool_result patch_fields %v", sa[0]["patch_fields"])
	}

	code, body := get(t, srv.URL+"/api/hooks/events?sync_only=maybe")
	var e map[string]string
	if code != http.StatusBadRequest || json.Unmarshal([]byte(body), &e) != nil || e["error"] == "" {
		t.Errorf("bad sync_only: %d %s", code, body)
	}
	resp, err := http.Post(srv.URL+"/api/hooks/events", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", resp.StatusCode)
	}
}
