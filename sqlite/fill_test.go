package sqlite

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
)

// TestFillEncodesAsEncodingJSON checks the bytes fill stores and hashes
// (results, then input, output and views; the reason codes) against
// encoding/json's encoding of the same record: the hash chain covers them,
// so records written before and after the hand-written encoder must hash
// alike.
func TestFillEncodesAsEncodingJSON(t *testing.T) {
	withPatch := benchRecord("p")
	withPatch.Results = append(withPatch.Results, warden.Result{Guardian: "hook", Decision: "modify", Mode: "enforce", Kind: "command",
		Patch: json.RawMessage("[ {\"op\": \"replace\", \"path\": \"/a\", \"value\": \"<b>&\u2028\"} ]"), Refused: "escalation_refused: x", Labels: []string{"pii", "<secret>"}})
	withPatch.ReasonCodes = []string{"a\"b", "<c>", "\xff"}
	withPatch.Output = json.RawMessage(`{"tool":"bash"}`)
	withPatch.Views = json.RawMessage(`{"agent":{"id":"x"}}`)
	noResults := benchRecord("n")
	noResults.Results, noResults.ReasonCodes = nil, nil
	badPatch := benchRecord("b")
	badPatch.Results[0].Patch = json.RawMessage(`{"a":`)
	for _, tc := range []struct {
		name    string
		rec     *audit.Record
		wantErr bool
	}{
		{"bench", benchRecord("r"), false},
		{"patch and escapes", withPatch, false},
		{"no results or codes", noResults, false},
		{"invalid patch", badPatch, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := requestPool.Get().(*request)
			defer putRequest(r)
			err := r.fill(tc.rec)
			if (err != nil) != tc.wantErr {
				t.Fatalf("fill: %v, want an error: %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			results := tc.rec.Results
			if results == nil {
				results = []warden.Result{}
			}
			res, err := json.Marshal(results)
			if err != nil {
				t.Fatal(err)
			}
			want := append(append(append(res, tc.rec.Input...), tc.rec.Output...), tc.rec.Views...)
			if !bytes.Equal(r.blob, want) {
				t.Fatalf("blob:\n got %s\nwant %s", r.blob, want)
			}
			if got := r.args[17].Value; got != int64(len(res)) {
				t.Fatalf("results_len %v, want %d", got, len(res))
			}
			var wantCodes any
			if len(tc.rec.ReasonCodes) > 0 {
				b, _ := json.Marshal(tc.rec.ReasonCodes)
				wantCodes = string(b)
			}
			if got := r.args[12].Value; got != wantCodes {
				t.Fatalf("reason_codes %#v, want %#v", got, wantCodes)
			}
		})
	}
}

// BenchmarkFill is the record's encoding on the recording goroutine: the
// results and reason codes as JSON, the blob, the content digest and the
// arguments (what Record does before it queues the request).
func BenchmarkFill(b *testing.B) {
	rec := benchRecord("f")
	r := requestPool.Get().(*request)
	defer putRequest(r)
	b.ReportAllocs()
	for b.Loop() {
		if err := r.fill(rec); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFillArgsAcrossRecords fills one request with records whose columns
// change, repeat and grow past maxBoxedString, and checks every string
// argument against its record: a box kept from an earlier record must
// never stand for a different value.
func TestFillArgsAcrossRecords(t *testing.T) {
	long := strings.Repeat("r", maxBoxedString+1)
	a, b := benchRecord("a"), benchRecord("b")
	b.Event, b.Decision, b.Reason, b.Tool, b.Tenant, b.Caller = "steps/message", "allow", long, "", "t1", "c1"
	c := benchRecord("c")
	c.Reason = long + "x"
	r := requestPool.Get().(*request)
	defer putRequest(r)
	for i, rec := range []*audit.Record{a, a, b, b, c, a, b} {
		if err := r.fill(rec); err != nil {
			t.Fatal(err)
		}
		want := map[int]string{0: rec.ID, 2: rec.Event, 3: rec.Surface, 4: rec.Direction, 5: rec.RequestID, 6: rec.AgentID,
			7: rec.SessionID, 8: rec.TurnID, 9: rec.StepID, 10: rec.Decision, 11: rec.Reason, 13: rec.PolicyID, 14: rec.PolicyVersion,
			20: rec.PolicyRevision, 22: rec.Caller, 23: rec.Tenant, 24: rec.ApprovalID, 25: rec.Tool}
		for j, w := range want {
			if got := r.args[j].Value; got != w {
				t.Fatalf("record %d (%s): argument %d is %#v, want %q", i, rec.ID, j, got, w)
			}
		}
	}
}
