package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/pipeline"

	"gopkg.in/yaml.v3"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/storetest"
)

// These tests run real subprocess hooks (scripts in ../testdata/hooks)
// through the one chain, as `warden hooks dispatch` does.

var scripts, _ = filepath.Abs("../testdata/hooks")

// memStore is the shared in-memory trace (storetest.Mem).
type memStore = storetest.Mem

// dispatcher builds a dispatcher from a hooks: YAML list (with the empty
// policy set, so only the hooks decide).
func dispatcher(t testing.TB, src string) (*Dispatcher, *memStore, *Pool) {
	t.Helper()
	d, st, pool, _ := dispatcherPool(t, src, 2, 4)
	return d, st, pool
}

// dispatcherPool is dispatcher with an async pool of the given size.
func dispatcherPool(t testing.TB, src string, workers, queue int) (*Dispatcher, *memStore, *Pool, *Router) {
	t.Helper()
	return dispatcherWith(t, src, workers, queue, nil)
}

// dispatcherWith is dispatcherPool with a change to every declaration (as
// the config makes, e.g. MaxProcs from limits.hook_procs) before building.
func dispatcherWith(t testing.TB, src string, workers, queue int, change func(*Decl)) (*Dispatcher, *memStore, *Pool, *Router) {
	t.Helper()
	src = strings.ReplaceAll(src, "$S", scripts)
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	decls, errs := Parse("test.yaml", doc.Content[0])
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for i := range decls {
		if change != nil {
			change(&decls[i])
		}
	}
	set, err := policy.LoadFS(os.DirFS(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(decls, policy.NewEngine(set, policy.Options{}), warden.Allow)
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.NewMem()
	pool := NewPool(workers, queue, st)
	dec := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow), Router: r.Chain, Views: catalog.Views, Store: st,
		Async: Async{Router: r, Pool: pool}})
	t.Cleanup(func() { pool.Close(context.Background()) })
	return NewDispatcher(dec), st, pool, r
}

func dispatch(t *testing.T, d *Dispatcher, event, payload string) (Result, time.Duration) {
	t.Helper()
	t0 := time.Now()
	res, err := d.Dispatch(context.Background(), event, []byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	return res, time.Since(t0)
}

const toolCall = `{"session_id":"s1","tool_call_id":"t1","tool_name":"edit_file","tool_input":{"path":"/a"}}`

func TestOrderedPatches(t *testing.T) {
	d, st, _ := dispatcher(t, `
- name: second
  events: [tool.pre_call]
  priority: 20
  command: [$S/append.sh, B]
- name: first
  events: [tool.pre_call]
  priority: 10
  command: [$S/append.sh, A]
- name: third
  events: [tool.pre_call]
  priority: 20
  command: [$S/append.sh, C]
`)
	res, _ := dispatch(t, d, "tool.pre_call", toolCall)
	path := res.Payload["tool_input"].(map[string]any)["path"]
	if res.Decision != "modify" || path != "/a+A+B+C" {
		t.Fatalf("decision %s, path %v; want modify /a+A+B+C (priority, then file order)", res.Decision, path)
	}
	if p, _ := res.Patch.(map[string]any); p == nil || p["tool_input"] == nil {
		t.Fatalf("patch %v", res.Patch)
	}
	rec := st.Records()[0]
	if len(rec.Results) != 4 || rec.Results[1].Guardian != "first" || rec.Results[1].Kind != KindCommand || len(rec.Results[1].Patch) == 0 {
		t.Fatalf("trace results %+v", rec.Results)
	}
}

func TestDenyStopsTheChain(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	d, st, _ := dispatcher(t, `
- name: deny
  events: [tool.pre_call]
  command: [$S/deny.sh]
- name: after
  events: [tool.pre_call]
  priority: 5
  command: [$S/marker.sh, `+marker+`]
`)
	res, _ := dispatch(t, d, "tool.pre_call", toolCall)
	if res.Decision != "deny" || res.DenyReason != "denied by deny.sh" {
		t.Fatalf("got %+v", res)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the hook after the deny ran")
	}
	if st.Records()[0].Decision != "deny" {
		t.Fatalf("trace %+v", st.Records()[0])
	}
}

func TestEscalationRefused(t *testing.T) {
	d, st, _ := dispatcher(t, `
- name: escalate
  events: [permission.request]
  command: [$S/escalate.sh]
`)
	res, _ := dispatch(t, d, "permission.request",
		`{"session_id":"s1","request_id":"perm_1","action":"write","resource":".env","decision":"denied","decision_class":"write"}`)
	if res.Decision == "modify" || res.Payload["decision"] != "denied" {
		t.Fatalf("escalation applied: %+v", res)
	}
	var refused string
	for _, r := range st.Records()[0].Results {
		if r.Guardian == "escalate" {
			refused = r.Refused
		}
	}
	if !strings.HasPrefix(refused, RefusedEscalation) {
		t.Fatalf("the refusal is not recorded: %+v", st.Records()[0].Results)
	}
}

func TestHangingHookKilledAtTimeout(t *testing.T) {
	for _, tt := range []struct{ failure, want string }{{"closed", "deny"}, {"open", "allow"}} {
		t.Run(tt.failure, func(t *testing.T) {
			t.Setenv("WARDEN_PIDFILE", filepath.Join(t.TempDir(), "pids")) // not passed: env allow-list
			d, st, _ := dispatcher(t, `
- name: hang
  events: [tool.pre_call]
  timeout: 500ms
  failure: `+tt.failure+`
  command: [$S/hang.sh]
`)
			res, took := dispatch(t, d, "tool.pre_call", toolCall)
			if res.Decision != tt.want {
				t.Fatalf("decision %s, want %s", res.Decision, tt.want)
			}
			if took > 1500*time.Millisecond {
				t.Fatalf("took %v, want within timeout + 1s", took)
			}
			if e := st.Records()[0].Results[1].Error; !strings.Contains(e, "timed out") {
				t.Fatalf("result error %q", e)
			}
		})
	}
}

func TestFloodingHookIsCapped(t *testing.T) {
	d, st, _ := dispatcher(t, `
- name: flood
  events: [tool.pre_call]
  timeout: 20s
  command: [$S/flood.sh]
`)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, _ := dispatch(t, d, "tool.pre_call", toolCall)
	runtime.ReadMemStats(&after)
	if res.Decision != "deny" {
		t.Fatalf("decision %s, want deny (failure closed)", res.Decision)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
		t.Fatalf("allocated %d MB for a 100 MB flood", grew>>20)
	}
	if e := st.Records()[0].Results[1].Error; !strings.Contains(e, "stdout exceeds") {
		t.Fatalf("result error %q", e)
	}
}

func TestFailingHook(t *testing.T) {
	d, st, _ := dispatcher(t, `
- name: fail
  events: [tool.pre_call]
  command: [$S/fail.sh]
`)
	res, _ := dispatch(t, d, "tool.pre_call", toolCall)
	if res.Decision != "deny" {
		t.Fatalf("decision %s, want deny", res.Decision)
	}
	if e := st.Records()[0].Results[1].Error; !strings.Contains(e, "exit status 1") {
		t.Fatalf("result error %q", e)
	}
}

func TestAsyncHooksRecordedAndDropsCounted(t *testing.T) {
	d, st, pool := dispatcher(t, `
- name: slow-audit
  events: [tool.post_call]
  mode: async
  timeout: 2s
  command: [sh, -c, "sleep 0.3; cat >/dev/null; echo '{}'"]
`)
	for range 10 {
		res, took := dispatch(t, d, "tool.post_call", `{"session_id":"s1","tool_name":"x","tool_result":"ok"}`)
		if res.Decision != "allow" || took > 200*time.Millisecond {
			t.Fatalf("async hook held the sync path: %s after %v", res.Decision, took)
		}
	}
	pool.Close(context.Background())
	runs, dropped := pool.Stats()
	if runs+dropped != 10 || dropped == 0 {
		t.Fatalf("runs %d dropped %d: want 10 in all, some dropped (2 workers, queue 4)", runs, dropped)
	}
	var asyncRecs, dropRecs int
	for _, r := range st.Records() {
		if len(r.Results) == 1 && r.Results[0].Mode == "async" {
			asyncRecs++
			if strings.Contains(r.Results[0].Error, "dropped") {
				dropRecs++
			}
		}
	}
	if asyncRecs != 10 || dropRecs != int(dropped) {
		t.Fatalf("trace: %d async records (%d drops), want 10 (%d)", asyncRecs, dropRecs, dropped)
	}
	b, _ := json.Marshal(st.Records()[len(st.Records())-1])
	if !strings.Contains(string(b), `"mode":"async"`) {
		t.Fatalf("record %s", b)
	}
}

func TestStandardAgentsSemantics(t *testing.T) {
	d, st, _ := dispatcher(t, `
- name: keep-last
  events: [filter_messages]
  command: [sh, -c, 'cat >/dev/null; echo "[{\"role\":\"user\",\"content\":\"last\"}]"']
- name: unchanged
  events: [after_tool_call_success]
  command: [sh, -c, 'cat >/dev/null; echo null']
- name: rewrite-stored
  events: [after_create_message]
  command: [sh, -c, 'cat >/dev/null; echo "{\"content\":\"changed\"}"']
`)
	res, _ := dispatch(t, d, "filter_messages",
		`{"thread_id":"th","agent_id":"a","messages":[{"role":"user","content":"first"},{"role":"user","content":"last"}]}`)
	if l, ok := res.Patch.([]any); res.Decision != "modify" || !ok || len(l) != 1 {
		t.Fatalf("filter_messages: the patch is the returned list: %+v", res)
	}
	res, _ = dispatch(t, d, "after_tool_call_success",
		`{"thread_id":"th","tool_call":{"id":"c1","function":{"name":"x","arguments":"{}"}},"result":{"ok":true}}`)
	if res.Decision != "allow" || res.Patch != nil {
		t.Fatalf("after_tool_call_success null = unchanged: %+v", res)
	}
	res, _ = dispatch(t, d, "after_create_message", `{"thread_id":"th","message":{"role":"user","content":"hi"}}`)
	if res.Decision == "modify" {
		t.Fatalf("an after_* hook changed what was stored: %+v", res)
	}
	rec := st.Records()[len(st.Records())-1]
	refused := ""
	for _, r := range rec.Results {
		if r.Guardian == "rewrite-stored" {
			refused = r.Refused
		}
	}
	if refused == "" {
		t.Fatalf("the refusal is not recorded: %+v", rec.Results)
	}
}
