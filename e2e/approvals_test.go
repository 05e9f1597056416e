package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// askPolicy asks about send_email on the AOS, MCP and hook surfaces.
const askPolicy = `id: email-needs-approval
version: "1"
events: [steps/toolCallRequest, protocols/MCP, tool.pre_call]
when: 'tool.name == "send_email" && direction != "inbound"'
decision: ask
reason: sending email needs approval
`

// approvalServer starts warden with askPolicy, the MCP upstream up at
// upURL (if set) and extra config.
func approvalServer(t *testing.T, upURL, extra string) (*server, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ask.yaml"), []byte(askPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := "policies: [./ask.yaml]\n" + extra
	if upURL != "" {
		conf += fmt.Sprintf("mcp:\n  servers:\n    up: {url: %q}\n", upURL+"/mcp")
	}
	cfg := filepath.Join(dir, "warden.yaml")
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	return startServer(t, wardenBinary(t), "--config", cfg, "--data", data), data
}

func aosEmail(to string, id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"steps/toolCallRequest","params":{"toolCallRequest":{"executionId":"ex-%d","toolId":"send_email","inputs":[{"name":"to","value":%q}]},"context":{"session":{"id":"retry-loop"}}}}`, id, id, to)
}

// aosAnswer is the part of an AOS answer the retry loop reads.
type aosAnswer struct {
	Result struct {
		Decision   string   `json:"decision"`
		ReasonCode []string `json:"reasonCode"`
		Data       struct {
			TraceID    string `json:"traceId"`
			ApprovalID string `json:"approvalId"`
		} `json:"data"`
	} `json:"result"`
}

func postAOS(t *testing.T, url, body string) aosAnswer {
	t.Helper()
	code, b := send(t, "POST", url+"/aos", "application/json", "", "", body)
	if code != 200 {
		t.Fatalf("/aos: %d %s", code, b)
	}
	var a aosAnswer
	if err := json.Unmarshal([]byte(b), &a); err != nil {
		t.Fatalf("/aos answer %s: %v", b, err)
	}
	return a
}

// TestAOSRetryLoop is issue 9's acceptance: an AOS step a policy asks about
// is denied with approval_required and data.approvalId; approved with
// `warden approvals approve`, the identical retried request is allowed
// once; a changed argument is not.
func TestAOSRetryLoop(t *testing.T) {
	srv, _ := approvalServer(t, "", "")
	first := postAOS(t, srv.url, aosEmail("bob@example.com", 1))
	id := first.Result.Data.ApprovalID
	if first.Result.Decision != "deny" || id == "" || first.Result.ReasonCode[0] != "approval_required" {
		t.Fatalf("first answer: %+v", first)
	}
	out, err := exec.Command(wardenBinary(t), "approvals", "list", "--server", srv.url).CombinedOutput()
	if err != nil || !strings.Contains(string(out), id) || !strings.Contains(string(out), "send_email") {
		t.Fatalf("approvals list: %v\n%s", err, out)
	}
	out, err = exec.Command(wardenBinary(t), "approvals", "approve", id, "--reason", "known customer", "--server", srv.url).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "approved") {
		t.Fatalf("approvals approve: %v\n%s", err, out)
	}
	out, err = exec.Command(wardenBinary(t), "approvals", "deny", id, "--server", srv.url).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "already approved") || !strings.Contains(string(out), "409") {
		t.Fatalf("deciding twice: %v\n%s", err, out)
	}
	if changed := postAOS(t, srv.url, aosEmail("eve@example.com", 2)); changed.Result.Decision != "deny" {
		t.Fatalf("a changed argument: %+v", changed)
	}
	retry := postAOS(t, srv.url, aosEmail("bob@example.com", 3))
	if retry.Result.Decision != "allow" || retry.Result.Data.ApprovalID != id {
		t.Fatalf("the approved retry: %+v", retry)
	}
	if again := postAOS(t, srv.url, aosEmail("bob@example.com", 4)); again.Result.Decision != "deny" {
		t.Fatalf("a second retry: %+v", again)
	}
	code, body := send(t, "GET", srv.url+"/api/approvals/"+id, "", "", "", "")
	var a struct{ State, UsedRecordID, DecisionRecordID string }
	_ = json.Unmarshal([]byte(strings.ReplaceAll(strings.ReplaceAll(body, "used_record_id", "UsedRecordID"), "decision_record_id", "DecisionRecordID")), &a)
	if code != 200 || a.State != "approved" || a.UsedRecordID == "" || a.DecisionRecordID == "" {
		t.Fatalf("the approval after: %d %s", code, body)
	}
	// The trace links back: the asking record, the approval's own decision
	// and the retry it let through each name the approval.
	_, runs := send(t, "GET", srv.url+"/api/hooks/runs?last=100", "", "", "", "")
	var recs []struct {
		ID, Surface, Decision string
		ApprovalID            string `json:"approval_id"`
	}
	if err := json.Unmarshal([]byte(runs), &recs); err != nil {
		t.Fatal(err)
	}
	linked := map[string]string{}
	for _, r := range recs {
		if r.ApprovalID == id {
			linked[r.ID] = r.Surface + "/" + r.Decision
		}
	}
	if linked[first.Result.Data.TraceID] != "aos/ask" || linked[a.DecisionRecordID] != "approval/allow" ||
		linked[retry.Result.Data.TraceID] != "aos/allow" || len(linked) != 3 {
		t.Fatalf("records naming the approval: %v", linked)
	}
}

// TestHeldApprovalsLoad is issue 9's acceptance: 1,000 MCP calls held for
// approval at once; the decision latency of unrelated calls is unchanged
// within noise, and the memory a held call costs is measured.
func TestHeldApprovalsLoad(t *testing.T) {
	heavy(t)
	up := &counter{body: `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"sent"}]}}`, sessions: true}
	srv, _ := approvalServer(t, up.serve(t), "approvals: {wait: 5m}\n")
	pid := srv.cmd.Process.Pid
	unrelated := func() (p50, p99 time.Duration) {
		var lat []time.Duration
		client := &http.Client{Timeout: 10 * time.Second}
		for i := range 2000 {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"steps/toolCallRequest","params":{"toolCallRequest":{"executionId":"u%d","toolId":"read_file","inputs":[]},"context":{"session":{"id":"unrelated"}}}}`, i, i)
			start := time.Now()
			resp, err := client.Post(srv.url+"/aos", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			lat = append(lat, time.Since(start))
		}
		slices.Sort(lat)
		return lat[len(lat)/2], lat[len(lat)*99/100]
	}
	unrelated() // warm up
	p50a, p99a := unrelated()
	rssBefore := procStatus(t, pid, "VmRSS")

	const held = 1000
	// 1,000 agents, a session each (one session may have at most
	// approval.MaxPendingPerSession pending): each initializes first and
	// gets the gateway's sealed Mcp-Session-Id for its upstream session.
	sessions := make([]string, held)
	for i := range sessions {
		req, _ := http.NewRequest("POST", srv.url+"/mcp/up", strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"load","version":"1"}}}`, i)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if sessions[i] = resp.Header.Get("Mcp-Session-Id"); resp.StatusCode != 200 || sessions[i] == "" {
			t.Fatalf("initialize %d: HTTP %d, Mcp-Session-Id %q", i, resp.StatusCode, sessions[i])
		}
	}
	initialized, _ := up.count()
	var wg sync.WaitGroup
	answers := make(chan string, held)
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: held}, Timeout: 5 * time.Minute}
	for i := range held {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"send_email","arguments":{"to":"user%d@example.com"}}}`, i, i)
			req, _ := http.NewRequest("POST", srv.url+"/mcp/up", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Session-Id", sessions[i])
			resp, err := client.Do(req)
			if err != nil {
				answers <- "error: " + err.Error()
				return
			}
			var b strings.Builder
			_, _ = fmt.Fprint(&b, resp.StatusCode, " ")
			buf := make([]byte, 4096)
			n, _ := resp.Body.Read(buf)
			b.Write(buf[:n])
			resp.Body.Close()
			answers <- b.String()
		}()
	}
	var pending []string
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		_, body := send(t, "GET", srv.url+"/api/approvals?state=pending&limit=1000", "", "", "", "")
		var page struct {
			Approvals []struct{ ID string } `json:"approvals"`
		}
		_ = json.Unmarshal([]byte(body), &page)
		if len(page.Approvals) == held {
			for _, a := range page.Approvals {
				pending = append(pending, a.ID)
			}
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(pending) != held {
		_, body := send(t, "GET", srv.url+"/api/approvals?state=pending&limit=1000", "", "", "", "")
		t.Fatalf("want %d approvals pending; the last listing: %.300s", held, body)
	}
	if n, _ := up.count(); n != initialized {
		t.Fatalf("%d held calls reached the upstream", n-initialized)
	}
	rssHeld := procStatus(t, pid, "VmRSS")
	p50b, p99b := unrelated()
	t.Logf("unrelated /aos decisions: p50 %v p99 %v with none held; p50 %v p99 %v with %d held", p50a, p99a, p50b, p99b, held)
	t.Logf("RSS %d MB before, %d MB with %d held: %.1f KB per held call", rssBefore>>10, rssHeld>>10, held, float64(rssHeld-rssBefore)/held)
	// Within noise: the held calls cost no CPU while they wait.
	if p50b > 2*p50a+500*time.Microsecond {
		t.Errorf("unrelated p50 %v with %d held, %v without", p50b, held, p50a)
	}
	// Approve every other one, deny the rest, through the API.
	var dw sync.WaitGroup
	for i, id := range pending {
		dw.Add(1)
		go func() {
			defer dw.Done()
			d := "approve"
			if i%2 == 1 {
				d = "deny"
			}
			if code, b := send(t, "POST", srv.url+"/api/approvals/"+id, "application/json", "", "", `{"decision":"`+d+`"}`); code != 200 {
				t.Errorf("deciding %s: %d %s", id, code, b)
			}
		}()
	}
	dw.Wait()
	wg.Wait()
	close(answers)
	sent, denied := 0, 0
	for a := range answers {
		switch {
		case strings.Contains(a, `"sent"`):
			sent++
		case strings.Contains(a, "approval denied"):
			denied++
		default:
			t.Errorf("held call answered %q", a)
		}
	}
	if n, _ := up.count(); sent != held/2 || denied != held/2 || n-initialized != held/2 {
		t.Errorf("answers: %d sent, %d denied; upstream got %d", sent, denied, n-initialized)
	}
}
