package hooks

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wardenhq/warden/redact"
)

// The pool's records of async runs go through its Filter, as the
// Decider's do (the guardian sets both to the trace's redaction).
func TestAsyncRecordsFiltered(t *testing.T) {
	d, st, pool := dispatcher(t, `
- name: audit
  events: [tool.post_call]
  mode: async
  timeout: 2s
  command: [sh, -c, "cat >/dev/null; echo 'saw AKIAIOSFODNN7EXAMPLE' >&2; exit 1"]
`)
	pool.Filter = redact.New(make([]byte, redact.KeySize)).RecordFilter(nil)
	dispatch(t, d, "tool.post_call", `{"session_id":"s1","tool_name":"x","tool_result":"key AKIAIOSFODNN7EXAMPLE"}`)
	pool.Close(context.Background())
	var async int
	for _, r := range st.Records() {
		if len(r.Results) != 1 || r.Results[0].Mode != "async" {
			continue
		}
		async++
		b, _ := json.Marshal(r)
		if strings.Contains(string(b), "AKIAIOSFODNN7EXAMPLE") || !strings.Contains(string(r.Input), "[REDACTED:aws_access_key:") {
			t.Errorf("async record not redacted: %s", b)
		}
	}
	if async != 1 {
		t.Fatalf("%d async records", async)
	}
}
