package aos

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"gopkg.in/yaml.v3"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/storetest"
)

// policyCase is one case of testdata/cases/*.yaml: policies (YAML text of
// policy documents), an AOS request (earlier requests in setup, e.g. the
// tool call a result correlates with), and the expected answer.
type policyCase struct {
	Name            string `yaml:"name"`
	Policies        string `yaml:"policies"`
	DefaultDecision string `yaml:"defaultDecision"`
	Setup           []any  `yaml:"setup"`
	Request         any    `yaml:"request"`
	Expect          struct {
		Decision   string `yaml:"decision"`
		ReasonCode any    `yaml:"reasonCode"` // a code the answer must list, or the exact list
		Message    string `yaml:"message"`    // a substring of the message
		Modified   any    `yaml:"modified"`   // a subset of modifiedRequest.params
	} `yaml:"expect"`
}

const casesDir = "../testdata/cases"

// TestPolicyCases drives every case through NewHandler with the policy
// engine as the chain's only enforcing step.
func TestPolicyCases(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(casesDir, "*.yaml"))
	if len(files) == 0 {
		t.Fatalf("no cases in %s", casesDir)
	}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var cases []policyCase
		if err := yaml.Unmarshal(src, &cases); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		base := strings.TrimSuffix(filepath.Base(file), ".yaml")
		for i, pc := range cases {
			name := pc.Name
			if name == "" {
				name = fmt.Sprintf("case%d", i)
			}
			t.Run(base+"/"+name, func(t *testing.T) { runPolicyCase(t, file, pc) })
		}
	}
}

func runPolicyCase(t *testing.T, file string, pc policyCase) {
	set, err := policy.LoadFS(fstest.MapFS{"policies.yaml": {Data: []byte(pc.Policies)}}, "policies.yaml")
	if err != nil {
		t.Fatalf("%s: policies: %v", file, err)
	}
	def := warden.Allow
	if pc.DefaultDecision != "" {
		if def, err = warden.ParseVerdict(pc.DefaultDecision); err != nil {
			t.Fatal(err)
		}
	}
	rec := &recorder{}
	chain := warden.NewChain(def,
		warden.Step{Name: "views", Handler: rec, Mode: warden.Audit},
		warden.Step{Name: "policy", Handler: policy.NewEngine(set, policy.Options{})})
	h := NewHandler(warden.NewDecider(chain, catalog.Views, storetest.NewMem(), nil), Options{Logf: t.Logf})
	for _, s := range pc.Setup {
		h.Handle(context.Background(), toJSON(t, s))
	}
	body := toJSON(t, pc.Request)
	resp := h.Handle(context.Background(), body)
	var r struct {
		Result map[string]any `json:"result"`
		Error  *Error         `json:"error"`
	}
	if err := json.Unmarshal(resp, &r); err != nil || r.Result == nil {
		t.Fatalf("response %s (%v)", resp, err)
	}
	views := func() string {
		ev := rec.last()
		if ev == nil {
			return "(no event)"
		}
		return fmt.Sprintf("event=%q direction=%q agent=%+v user=%+v session=%q turn=%q step=%q tool=%+v message=%+v reasoning=%q text=%q",
			ev.Name, ev.Direction, ev.Agent, ev.User, ev.SessionID, ev.TurnID, ev.StepID, ev.Tool, ev.Message, ev.Reasoning, ev.Text())
	}
	if got := r.Result["decision"]; got != pc.Expect.Decision {
		t.Fatalf("decision = %v, want %s\nresult: %s\nviews: %s", got, pc.Expect.Decision, resp, views())
	}
	switch want := pc.Expect.ReasonCode.(type) {
	case string:
		codes, _ := r.Result["reasonCode"].([]any)
		found := false
		for _, c := range codes {
			found = found || c == want
		}
		if !found {
			t.Errorf("reasonCode %v does not list %q", r.Result["reasonCode"], want)
		}
	case []any:
		if !jsonEqual(r.Result["reasonCode"], want) {
			t.Errorf("reasonCode = %v, want %v", r.Result["reasonCode"], want)
		}
	}
	if msg, _ := r.Result["message"].(string); !strings.Contains(msg, pc.Expect.Message) {
		t.Errorf("message %q does not contain %q", msg, pc.Expect.Message)
	}
	if pc.Expect.Modified != nil {
		mr, _ := r.Result["modifiedRequest"].(map[string]any)
		if mr == nil {
			t.Fatalf("no modifiedRequest: %s", resp)
		}
		want := decodeJSON(t, toJSON(t, pc.Expect.Modified))
		if path, ok := jsonSubset(want, mr["params"], "params"); !ok {
			t.Errorf("modifiedRequest.params does not contain the expected fragment at %s\n got %s\nwant %s",
				path, toJSON(t, mr["params"]), toJSON(t, pc.Expect.Modified))
		}
		if !jsonEqual(mr["id"], decodeJSON(t, body).(map[string]any)["id"]) {
			t.Errorf("modifiedRequest id = %v", mr["id"])
		}
	}
}

// toJSON encodes a YAML-decoded value as JSON.
func toJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("case value is not JSON-encodable: %v", err)
	}
	return b
}

// jsonSubset reports whether want is contained in got: objects by key
// (recursively), arrays element by element with equal length, scalars by
// equality. It returns the first path that differs.
func jsonSubset(want, got any, path string) (string, bool) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path, false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				return path + "." + k, false
			}
			if p, ok := jsonSubset(wv, gv, path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path, false
		}
		for i := range w {
			if p, ok := jsonSubset(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return "", true
	}
	return path, jsonEqual(want, got)
}
