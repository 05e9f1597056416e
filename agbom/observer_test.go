package agbom_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/agbom"

	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/storetest"
)

// acsStep decides an ACS agbom/* step of agent through a Decider whose
// chain answers verdict, with the Observer keeping the AgBOM.
func acsStep(t *testing.T, st *storetest.Mem, method, agent string, payload map[string]any, verdict warden.Verdict) {
	t.Helper()
	h := warden.HandlerFunc(func(context.Context, *warden.Event) (warden.Decision, error) {
		return warden.Decision{Verdict: verdict, Reason: "test"}, nil
	})
	var logged []string
	obs := &agbom.Observer{Store: st, Now: func() time.Time { return at }, Logf: func(f string, a ...any) { logged = append(logged, f) }}
	d := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "p", Handler: h}), Views: catalog.Views, Store: st, Observer: obs})
	ev := &warden.Event{Name: method, Surface: warden.SurfaceACS, Payload: payload}
	ev.Envelope.Context = map[string]any{"agent_id": agent, "session_id": "s1"}
	if _, err := d.Decide(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
}

func ids(t *testing.T, st *storetest.Mem, agent string) string {
	cs, err := st.AgBOM(context.Background(), "", agent)
	if errors.Is(err, agbom.ErrNoAgBOM) {
		return "none"
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return strings.Join(out, " ")
}

func TestObserverACS(t *testing.T) {
	st := storetest.NewMem()
	comp := func(id, typ string) map[string]any { return map[string]any{"id": id, "type": typ, "name": id} }
	acsStep(t, st, catalog.MethodAgBOMSnapshot, "a1", map[string]any{"agbom": map[string]any{"components": []any{comp("m1", "model"), comp("t1", "tool")}}}, warden.Allow)
	if got := ids(t, st, "a1"); got != "m1 t1" {
		t.Fatalf("after the snapshot: %s", got)
	}
	acsStep(t, st, catalog.MethodAgBOMChanged, "a1", map[string]any{"added": []any{comp("t2", "tool")}, "removed": []any{"t1"}}, warden.Allow)
	if got := ids(t, st, "a1"); got != "m1 t2" {
		t.Fatalf("after the change: %s", got)
	}
	acsStep(t, st, catalog.MethodAgBOMChanged, "a1", map[string]any{"added": []any{comp("banned", "model")}}, warden.Deny)
	if got := ids(t, st, "a1"); got != "m1 t2" {
		t.Fatalf("a denied change was applied: %s", got)
	}
	acsStep(t, st, catalog.MethodAgBOMChanged, "a1", map[string]any{"added": []any{comp("bad", "robot")}}, warden.Allow)
	if got := ids(t, st, "a1"); got != "m1 t2" {
		t.Fatalf("an invalid change was applied: %s", got)
	}
	acsStep(t, st, catalog.MethodAgBOMSnapshot, "a1", map[string]any{"components": []any{comp("m2", "model")}}, warden.Allow)
	if got := ids(t, st, "a1"); got != "m2" {
		t.Fatalf("after a second snapshot (bare document): %s", got)
	}
}

func TestFromACSErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		method  string
		agent   string
		payload map[string]any
		want    string
	}{
		"no agent":        {catalog.MethodAgBOMSnapshot, "", map[string]any{}, "no agent"},
		"not an array":    {catalog.MethodAgBOMSnapshot, "a", map[string]any{"components": "x"}, "components: want an array"},
		"no id":           {catalog.MethodAgBOMSnapshot, "a", map[string]any{"components": []any{map[string]any{"type": "tool"}}}, "components[0]: component has no id"},
		"unknown type":    {catalog.MethodAgBOMChanged, "a", map[string]any{"changed": []any{map[string]any{"id": "x", "type": "robot"}}}, `changed[0]: component "x": unknown type "robot"`},
		"bad removed":     {catalog.MethodAgBOMChanged, "a", map[string]any{"removed": []any{42.0}}, "removed[0]: want a component id"},
		"removed no id":   {catalog.MethodAgBOMChanged, "a", map[string]any{"removed": []any{map[string]any{}}}, "removed[0]: no id"},
		"other method":    {"steps/userMessage", "a", map[string]any{}, "not an AgBOM method"},
		"bad model field": {catalog.MethodAgBOMSnapshot, "a", map[string]any{"components": []any{map[string]any{"id": "m", "type": "model", "model_fields": map[string]any{"context_window": "big"}}}}, "components[0]: component:"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := agbom.FromACS(tc.method, "", tc.agent, tc.payload, at)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"id":"x","type":"model","model_fields":{"context_window":1}}`))
	f.Add([]byte(`{"id":"x","type":"skill","skill_fields":{"tools":["a"]}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := agbom.Parse(b)
		if err != nil {
			return
		}
		d := &agbom.Document{Agent: "a", Components: []*agbom.Component{c}}
		if _, err := agbom.CycloneDX(d); err != nil {
			t.Fatal(err)
		}
		if _, err := agbom.SPDX(d); err != nil {
			t.Fatal(err)
		}
	})
}
