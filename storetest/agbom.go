package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/agbom"
)

// RunAgBOM runs the agbom.Store contract tests as subtests of t. open
// returns an empty store.
//
// The contract checked, beyond the agbom.Store documentation:
//   - components come back ordered by id with their Doc byte for byte, the
//     update's Source and At (UTC, to the microsecond);
//   - Replace drops only the components of its source; Remove drops by id;
//   - an update past AgBOMMaxComponents fails with ErrAgBOMFull and
//     changes nothing; so does a pin set past MaxToolPins;
//   - agents are per tenant; an agent left with no component is gone;
//   - invalid updates and pins are errors, not writes;
//   - 16 goroutines updating one agent at once all land.
func RunAgBOM(t *testing.T, open func(t *testing.T) agbom.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(*testing.T, agbom.Store)
	}{
		{"RoundTrip", testAgBOMRoundTrip},
		{"Replace", testAgBOMReplace},
		{"Bound", testAgBOMBound},
		{"Tenants", testAgBOMTenants},
		{"Invalid", testAgBOMInvalid},
		{"Pins", testToolPins},
		{"PinsBound", testToolPinsBound},
		{"Concurrent", testAgBOMConcurrent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open(t)) })
	}
}

func comp(id, typ string) agbom.StoredComponent {
	return agbom.StoredComponent{ID: id, Type: typ, Doc: json.RawMessage(fmt.Sprintf(`{"id":%q,"type":%q,"name":"n-%s"}`, id, typ, id))}
}

func update(t *testing.T, s agbom.Store, u *agbom.Update) {
	t.Helper()
	if err := s.UpdateAgBOM(context.Background(), u); err != nil {
		t.Fatalf("UpdateAgBOM: %v", err)
	}
}

func bomIDs(t *testing.T, s agbom.Store, tenant, agent string) []string {
	t.Helper()
	cs, err := s.AgBOM(context.Background(), tenant, agent)
	if err != nil {
		t.Fatalf("AgBOM(%q, %q): %v", tenant, agent, err)
	}
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID + "/" + c.Source
	}
	return ids
}

func testAgBOMRoundTrip(t *testing.T, s agbom.Store) {
	ctx := context.Background()
	if _, err := s.AgBOM(ctx, "", "a1"); !errors.Is(err, agbom.ErrNoAgBOM) {
		t.Fatalf("empty store: AgBOM err = %v, want ErrNoAgBOM", err)
	}
	at := base.Add(1234567 * time.Nanosecond)
	update(t, s, &agbom.Update{Agent: "a1", Source: agbom.SourceACS, Replace: true, At: at,
		Put: []agbom.StoredComponent{comp("urn:tool:b", "tool"), comp("urn:model:a", "model")}})
	cs, err := s.AgBOM(ctx, "", "a1")
	if err != nil || len(cs) != 2 {
		t.Fatalf("AgBOM = %v, %v", cs, err)
	}
	want := comp("urn:model:a", "model")
	if c := cs[0]; c.ID != want.ID || c.Type != "model" || string(c.Doc) != string(want.Doc) || c.Source != agbom.SourceACS ||
		!c.Updated.Equal(usTime(at)) || c.Updated.Location() != time.UTC {
		t.Errorf("component = %+v (doc %s), want %+v at %v", c, c.Doc, want, usTime(at))
	}
	if cs[1].ID != "urn:tool:b" {
		t.Errorf("order: %q after %q", cs[1].ID, cs[0].ID)
	}
	agents, err := s.AgBOMAgents(ctx, "", false, 0)
	if err != nil || len(agents) != 1 || agents[0].ID != "a1" || agents[0].Components != 2 || !agents[0].Updated.Equal(usTime(at)) {
		t.Fatalf("AgBOMAgents = %+v, %v", agents, err)
	}
	update(t, s, &agbom.Update{Agent: "a1", Source: agbom.SourceACS, Remove: []string{"urn:tool:b", "urn:model:a"}, At: at})
	if _, err := s.AgBOM(ctx, "", "a1"); !errors.Is(err, agbom.ErrNoAgBOM) {
		t.Fatalf("after removing every component: err = %v, want ErrNoAgBOM", err)
	}
	if agents, _ := s.AgBOMAgents(ctx, "", true, 0); len(agents) != 0 {
		t.Fatalf("agents after removal = %+v", agents)
	}
}

func testAgBOMReplace(t *testing.T, s agbom.Store) {
	update(t, s, &agbom.Update{Agent: "a", Source: agbom.SourceACS, Replace: true, At: base,
		Put: []agbom.StoredComponent{comp("m1", "model"), comp("t1", "tool")}})
	update(t, s, &agbom.Update{Agent: "a", Source: agbom.SourceMCP, At: base,
		Put: []agbom.StoredComponent{comp("srv", "mcp_server"), comp("srv/t", "tool")}})
	update(t, s, &agbom.Update{Agent: "a", Source: agbom.SourceACS, Replace: true, At: base,
		Put: []agbom.StoredComponent{comp("m2", "model")}})
	if got, want := fmt.Sprint(bomIDs(t, s, "", "a")), "[m2/acs srv/mcp srv/t/mcp]"; got != want {
		t.Fatalf("after a second snapshot: %s, want %s", got, want)
	}
	update(t, s, &agbom.Update{Agent: "a", Source: agbom.SourceACS, Remove: []string{"srv/t"},
		Put: []agbom.StoredComponent{comp("t9", "tool")}, At: base})
	if got, want := fmt.Sprint(bomIDs(t, s, "", "a")), "[m2/acs srv/mcp t9/acs]"; got != want {
		t.Fatalf("after a change: %s, want %s", got, want)
	}
}

func testAgBOMBound(t *testing.T, s agbom.Store) {
	put := make([]agbom.StoredComponent, agbom.MaxComponents)
	for i := range put {
		put[i] = comp(fmt.Sprintf("c%04d", i), "tool")
	}
	update(t, s, &agbom.Update{Agent: "a", Source: agbom.SourceACS, Put: put, At: base})
	err := s.UpdateAgBOM(context.Background(), &agbom.Update{Agent: "a", Source: agbom.SourceMCP,
		Put: []agbom.StoredComponent{comp("one-more", "tool")}, At: base})
	if !errors.Is(err, agbom.ErrFull) {
		t.Fatalf("component %d: err = %v, want ErrAgBOMFull", agbom.MaxComponents+1, err)
	}
	if n := len(bomIDs(t, s, "", "a")); n != agbom.MaxComponents {
		t.Fatalf("after the refused update: %d components", n)
	}
	// Replacing within the bound is fine.
	update(t, s, &agbom.Update{Agent: "a", Source: agbom.SourceACS, Replace: true, Put: put[:10], At: base})
	if n := len(bomIDs(t, s, "", "a")); n != 10 {
		t.Fatalf("after a smaller snapshot: %d components", n)
	}
	big := comp("big", "tool")
	big.Doc = json.RawMessage(`{"x":"` + string(make([]byte, 0)) + fmt.Sprintf("%0*d", agbom.MaxDoc, 0) + `"}`)
	if err := s.UpdateAgBOM(context.Background(), &agbom.Update{Agent: "a", Put: []agbom.StoredComponent{big}}); !errors.Is(err, agbom.ErrFull) {
		t.Fatalf("a component over MaxAgBOMDoc: err = %v, want ErrAgBOMFull", err)
	}
}

func testAgBOMTenants(t *testing.T, s agbom.Store) {
	ctx := context.Background()
	update(t, s, &agbom.Update{Tenant: "acme", Agent: "a", Source: agbom.SourceACS, Put: []agbom.StoredComponent{comp("x", "tool")}, At: base})
	update(t, s, &agbom.Update{Tenant: "beta", Agent: "a", Source: agbom.SourceACS, Put: []agbom.StoredComponent{comp("y", "tool"), comp("z", "tool")}, At: base})
	update(t, s, &agbom.Update{Tenant: "beta", Agent: "b", Source: agbom.SourceACS, Put: []agbom.StoredComponent{comp("y", "tool")}, At: base})
	if _, err := s.AgBOM(ctx, "", "a"); !errors.Is(err, agbom.ErrNoAgBOM) {
		t.Errorf("tenant-less read of a tenant's agent: err = %v, want ErrNoAgBOM", err)
	}
	if got := fmt.Sprint(bomIDs(t, s, "beta", "a")); got != "[y/acs z/acs]" {
		t.Errorf("beta/a = %s", got)
	}
	list := func(tenant string, all bool, limit int) string {
		as, err := s.AgBOMAgents(ctx, tenant, all, limit)
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, a := range as {
			out += fmt.Sprintf("%s/%s:%d ", a.Tenant, a.ID, a.Components)
		}
		return out
	}
	if got := list("beta", false, 0); got != "beta/a:2 beta/b:1 " {
		t.Errorf("beta's agents = %q", got)
	}
	if got := list("", true, 0); got != "acme/a:1 beta/a:2 beta/b:1 " {
		t.Errorf("all agents = %q", got)
	}
	if got := list("", true, 2); got != "acme/a:1 beta/a:2 " {
		t.Errorf("all agents, limit 2 = %q", got)
	}
	if got := list("", false, 0); got != "" {
		t.Errorf("tenant-less agents = %q", got)
	}
}

func testAgBOMInvalid(t *testing.T, s agbom.Store) {
	ctx := context.Background()
	for name, u := range map[string]*agbom.Update{
		"nil":       nil,
		"no agent":  {Put: []agbom.StoredComponent{comp("x", "tool")}},
		"no id":     {Agent: "a", Put: []agbom.StoredComponent{{Type: "tool", Doc: json.RawMessage(`{}`)}}},
		"no type":   {Agent: "a", Put: []agbom.StoredComponent{{ID: "x", Doc: json.RawMessage(`{}`)}}},
		"not JSON":  {Agent: "a", Put: []agbom.StoredComponent{{ID: "x", Type: "tool", Doc: json.RawMessage(`{nope`)}}},
		"an array":  {Agent: "a", Put: []agbom.StoredComponent{{ID: "x", Type: "tool", Doc: json.RawMessage(`[]`)}}},
		"empty doc": {Agent: "a", Put: []agbom.StoredComponent{{ID: "x", Type: "tool"}}},
	} {
		if err := s.UpdateAgBOM(ctx, u); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if as, _ := s.AgBOMAgents(ctx, "", true, 0); len(as) != 0 {
		t.Errorf("invalid updates wrote %+v", as)
	}
	if err := s.PinTools(ctx, "", []agbom.ToolPin{{Name: "x", Hash: "h"}}, nil); err == nil {
		t.Error("pins without a server: no error")
	}
	if err := s.PinTools(ctx, "srv", []agbom.ToolPin{{Name: "x"}}, nil); err == nil {
		t.Error("a pin without a hash: no error")
	}
}

func pin(name, desc string) agbom.ToolPin {
	return agbom.ToolPin{Name: name, Description: desc, InputSchema: json.RawMessage(`{"type":"object"}`),
		Hash: fmt.Sprintf("%064x", len(name)*1000+len(desc)), Pinned: base.Add(987654321)}
}

func testToolPins(t *testing.T, s agbom.Store) {
	ctx := context.Background()
	if ps, err := s.ToolPins(ctx, "srv"); err != nil || len(ps) != 0 || ps == nil {
		t.Fatalf("no pins: %#v, %v (want an empty slice)", ps, err)
	}
	if err := s.PinTools(ctx, "srv", []agbom.ToolPin{pin("echo", "Echoes"), pin("add", "Adds")}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.PinTools(ctx, "other", []agbom.ToolPin{pin("echo", "Other")}, nil); err != nil {
		t.Fatal(err)
	}
	ps, err := s.ToolPins(ctx, "srv")
	if err != nil || len(ps) != 2 {
		t.Fatalf("ToolPins = %+v, %v", ps, err)
	}
	want := pin("add", "Adds")
	want.Server = "srv"
	if g := ps[0]; g.Name != want.Name || g.Server != "srv" || g.Description != want.Description || string(g.InputSchema) != string(want.InputSchema) ||
		g.Hash != want.Hash || !g.Pinned.Equal(usTime(want.Pinned)) || g.Pinned.Location() != time.UTC {
		t.Errorf("pin = %+v, want %+v", g, want)
	}
	if err := s.PinTools(ctx, "srv", []agbom.ToolPin{pin("echo", "Echoes, changed")}, []string{"add"}); err != nil {
		t.Fatal(err)
	}
	ps, _ = s.ToolPins(ctx, "srv")
	if len(ps) != 1 || ps[0].Name != "echo" || ps[0].Description != "Echoes, changed" {
		t.Errorf("after a change: %+v", ps)
	}
	if ps, _ := s.ToolPins(ctx, "other"); len(ps) != 1 || ps[0].Description != "Other" {
		t.Errorf("another server's pins changed: %+v", ps)
	}
}

func testToolPinsBound(t *testing.T, s agbom.Store) {
	ctx := context.Background()
	put := make([]agbom.ToolPin, agbom.MaxToolPins)
	for i := range put {
		put[i] = pin(fmt.Sprintf("t%04d", i), "d")
	}
	if err := s.PinTools(ctx, "srv", put, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.PinTools(ctx, "srv", []agbom.ToolPin{pin("over", "d")}, nil); !errors.Is(err, agbom.ErrFull) {
		t.Fatalf("pin %d: err = %v, want ErrAgBOMFull", agbom.MaxToolPins+1, err)
	}
	if ps, _ := s.ToolPins(ctx, "srv"); len(ps) != agbom.MaxToolPins {
		t.Fatalf("after the refused pin: %d pins", len(ps))
	}
	if err := s.PinTools(ctx, "srv", []agbom.ToolPin{pin("over", "d")}, []string{"t0000"}); err != nil {
		t.Fatalf("replacing one within the bound: %v", err)
	}
}

func testAgBOMConcurrent(t *testing.T, s agbom.Store) {
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.UpdateAgBOM(context.Background(), &agbom.Update{Agent: "a", Source: agbom.SourceMCP,
				Put: []agbom.StoredComponent{comp(fmt.Sprintf("c%02d", i), "tool")}, At: base})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := len(bomIDs(t, s, "", "a")); n != 16 {
		t.Fatalf("%d components after 16 concurrent updates", n)
	}
}
