package aos

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/policy"
)

// externalMailPolicy denies send_email to anyone outside company.io, on
// the tool view's "to" argument.
const externalMailPolicy = "id: no-external-email\nversion: \"1\"\nevents: [\"steps/toolCallRequest\"]\n" +
	"when: 'tool.name == \"send_email\" && !string(tool.args.to).endsWith(\"@company.io\")'\n" +
	"decision: deny\nreason: external email\n"

// TestAttackDuplicateInputNames: a tool call naming one input twice was
// decided on the last value (the tool view keeps one per name) while the
// tool may use the first; the endpoint refuses it as invalid params naming
// the duplicate, for exact duplicates and names that differ only in case
// (jsonstrict's rule for object keys), in short and long input lists.
func TestAttackDuplicateInputNames(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.yaml"), []byte(externalMailPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := policy.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "policy", Handler: policy.NewEngine(set, policy.Options{})}), Views: catalog.Views})
	srv := httptest.NewServer(NewHandler(d, Options{Logf: func(string, ...any) {}}))
	defer srv.Close()

	call := func(inputs string) (decision string, rpcErr *Error) {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"steps/toolCallRequest","params":{"context":{},` +
			`"toolCallRequest":{"executionId":"e1","toolId":"send_email","inputs":[` + inputs + `]}}}`
		resp, err := http.Post(srv.URL+"/aos", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var r struct {
			Result *struct {
				Decision string `json:"decision"`
			} `json:"result"`
			Error *Error `json:"error"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("answer %s: %v", b, err)
		}
		if r.Result != nil {
			return r.Result.Decision, nil
		}
		return "", r.Error
	}
	in := func(name, value string) string { return fmt.Sprintf(`{"name":%q,"value":%q}`, name, value) }

	// The policy holds on one value either way.
	if got, e := call(in("to", "evil@attacker.example")); got != "deny" {
		t.Fatalf("one external to: %q %+v, want deny", got, e)
	}
	if got, e := call(in("to", "ok@company.io") + "," + in("subject", "hi")); got != "allow" {
		t.Fatalf("one internal to: %q %+v, want allow", got, e)
	}

	var long []string
	for i := 0; i < 20; i++ {
		long = append(long, in(fmt.Sprintf("arg%d", i), "x"))
	}
	long = append(long, in("to", "evil@attacker.example"), in("subject", "hi"), in("TO", "ok@company.io"))
	for _, tc := range []struct{ name, inputs, field, reason string }{
		{"same name", in("to", "evil@attacker.example") + "," + in("to", "ok@company.io"),
			"params.toolCallRequest.inputs[1].name", `duplicate input name "to" (also inputs[0])`},
		{"case variant", in("To", "evil@attacker.example") + "," + in("subject", "hi") + "," + in("to", "ok@company.io"),
			"params.toolCallRequest.inputs[2].name", `input names "To" (inputs[0]) and "to" differ only in case`},
		{"long list", strings.Join(long, ","),
			"params.toolCallRequest.inputs[22].name", `input names "to" (inputs[20]) and "TO" differ only in case`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, e := call(tc.inputs)
			if e == nil {
				t.Fatalf("answered %q, want invalid params naming the duplicate", got)
			}
			want := "invalid params: " + tc.field + ": " + tc.reason
			if e.Code != CodeInvalidParams || e.Message != want || e.Data["field"] != tc.field {
				t.Fatalf("error %d %q %v, want %d %q field %s", e.Code, e.Message, e.Data, CodeInvalidParams, want, tc.field)
			}
		})
	}

	// catalog.CheckPayload (hook dispatch, eval, the Go API) refuses it alike.
	p := map[string]any{"context": map[string]any{}, "toolCallRequest": map[string]any{"executionId": "e", "toolId": "send_email",
		"inputs": []any{map[string]any{"name": "to", "value": "evil@attacker.example"}, map[string]any{"name": "to", "value": "ok@company.io"}}}}
	if err := catalog.CheckPayload(MethodToolCallRequest, p); err == nil || err.Error() != `invalid payload: params.toolCallRequest.inputs[1].name: duplicate input name "to" (also inputs[0])` {
		t.Fatalf("catalog.CheckPayload: %v", err)
	}
}
