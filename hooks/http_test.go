package hooks

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/wardenhq/warden/pipeline"

	"gopkg.in/yaml.v3"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/aos"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/storetest"
)

// remoteGuardian is a third-party AOS Guardian: another warden AOS endpoint
// whose only policy denies tool calls to "wire_money".
func remoteGuardian(t *testing.T) *httptest.Server {
	t.Helper()
	dir := t.TempDir()
	pol := "id: secteam-no-wires\nversion: \"7\"\nevents: [\"steps/toolCallRequest\"]\n" +
		"when: 'tool.name == \"wire_money\"'\ndecision: deny\nreason: the security team blocks wires\n"
	if err := os.WriteFile(dir+"/p.yaml", []byte(pol), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := policy.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	dec := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "policy", Handler: policy.NewEngine(set, policy.Options{})}), Views: catalog.Views})
	srv := httptest.NewServer(aos.NewHandler(dec, aos.Options{Logf: func(string, ...any) {}}))
	t.Cleanup(srv.Close)
	return srv
}

// TestRemoteGuardianComposesIntoAOS: a declared `aos` hook puts a remote
// Guardian into the /aos chain beside the built-in engine; its deny is the
// chain's deny, its allow lets the engine's decision stand.
func TestRemoteGuardianComposesIntoAOS(t *testing.T) {
	remote := remoteGuardian(t)
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("- name: secteam\n  events: [\"steps/*\", \"protocols/*\"]\n  aos: {url: \""+remote.URL+"\"}\n"), &doc); err != nil {
		t.Fatal(err)
	}
	decls, errs := Parse("warden.yaml", doc.Content[0])
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	set, err := policy.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(decls, policy.NewEngine(set, policy.Options{}), warden.Allow)
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.NewMem()
	dec := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow), Router: r.Chain, Views: catalog.Views, Store: st})
	h := aos.NewHandler(dec, aos.Options{Logf: func(string, ...any) {}})
	call := func(tool, value string) map[string]any {
		body := `{"jsonrpc":"2.0","id":1,"method":"steps/toolCallRequest","params":{"toolCallRequest":{"executionId":"e","toolId":"` +
			tool + `","inputs":[{"name":"v","value":"` + value + `"}]},"context":{"session":{"id":"s"}}}}`
		var resp struct{ Result map[string]any }
		if err := json.Unmarshal(h.Handle(context.Background(), []byte(body)), &resp); err != nil {
			t.Fatal(err)
		}
		return resp.Result
	}
	if res := call("wire_money", "100 EUR"); res["decision"] != "deny" || res["policyId"] != "secteam-no-wires" {
		t.Fatalf("remote deny not applied: %v", res)
	}
	if res := call("read_file", "notes.txt"); res["decision"] != "allow" {
		t.Fatalf("ordinary call: %v", res)
	}
	// The built-in engine still runs first: a secret is denied by it.
	if res := call("http_post", "AKIAIOSFODNN7EXAMPLE"); res["decision"] != "deny" || res["policyId"] != "deny-secrets-in-tool-calls" {
		t.Fatalf("built-in engine: %v", res)
	}
	kinds := map[string]bool{}
	for _, res := range st.Records()[0].Results {
		kinds[res.Kind] = true
	}
	if !kinds[KindAOS] {
		t.Fatalf("the remote guardian's result is not in the trace: %+v", st.Records()[0].Results)
	}
}

func TestDispatchAndCatalogOverHTTP(t *testing.T) {
	d, _, _, router := dispatcherPool(t, `
- name: first
  events: [tool.pre_call]
  priority: 10
  command: [$S/append.sh, A]
- name: audit
  events: ["tool.*"]
  mode: async
  command: [$S/empty.sh]
`, 2, 4)
	mux := http.NewServeMux()
	mux.Handle("/api/hooks/dispatch", d)
	mux.Handle("GET /api/hooks/catalog", router.CatalogHandler())
	srv := httptest.NewServer(mux)
	defer srv.Close()

	post := func(body string) (int, string) {
		resp, err := http.Post(srv.URL+"/api/hooks/dispatch", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := post(`{"event":"tool.pre_call","payload":` + toolCall + `}`)
	if code != 200 || !strings.Contains(body, `"decision":"modify"`) || !strings.Contains(body, `/a+A`) {
		t.Fatalf("%d %s", code, body)
	}
	for _, bad := range []string{`{"event":"tool.nope","payload":{}}`, `{"event":"tool.pre_call","payload":[1]}`, `{"payload":{}}`, `not json`} {
		if code, body := post(bad); code != 400 || !strings.Contains(body, `"error"`) {
			t.Errorf("%s: %d %s", bad, code, body)
		}
	}
	// Ambiguous JSON is refused naming where (issue 7, measurement 2): the
	// hook runtime would act on a value the policies did not see.
	for bad, want := range map[string]string{
		`{"event":"tool.pre_call","payload":{"tool_name":"edit_file","tool_input":{"path":"/etc/shadow","path":"/a"}}}`: `duplicate key \"path\" in payload.tool_input`,
		`{"event":"tool.pre_call","Event":"session.start","payload":{}}`:                                                `keys \"event\" and \"Event\" differ only in case`,
		`{"Event":"tool.pre_call","payload":{}}`:                                                                        `unknown key \"Event\"`,
	} {
		if code, body := post(bad); code != 400 || !strings.Contains(body, want) {
			t.Errorf("%s: %d %s, want 400 naming %s", bad, code, body, want)
		}
	}
	resp, err := http.Get(srv.URL + "/api/hooks/catalog?event=tool.pre_call")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var cat []struct {
		Event string
		Hooks []Info
	}
	if err := json.NewDecoder(resp.Body).Decode(&cat); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, h := range cat[0].Hooks {
		names = append(names, h.Name+"/"+h.Mode)
	}
	if got := strings.Join(names, ","); got != "policy/sync,first/sync,audit/async" {
		t.Fatalf("run order %s", got)
	}
}
