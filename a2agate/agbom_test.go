package a2agate

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wardenhq/warden/agbom"
	"github.com/wardenhq/warden/storetest"
)

// TestAgentCardAgBOM: a fetched agent card becomes an a2a_peer component of
// the caller's AgBOM (the default agent without auth), without the
// upstream's credentials.
func TestAgentCardAgBOM(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/agent-card.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"name":"Billing","version":"2.1","description":"bills","provider":{"organization":"Acme"},
			"supportedInterfaces":[{"url":"x","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"skills":[]}`))
	}))
	defer up.Close()
	bom := storetest.NewMem()
	gw := newGateway(t, map[string]string{"billing": strings.Replace(up.URL, "http://", "http://user:pw@", 1) + "/?key=k"}, Options{AgBOM: bom})
	resp, err := http.Get(gw.URL + "/a2a/billing/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("card: %d", resp.StatusCode)
	}
	cs, err := bom.AgBOM(context.Background(), "", agbom.DefaultAgent)
	if err != nil || len(cs) != 1 {
		t.Fatalf("AgBOM = %+v, %v", cs, err)
	}
	d, err := agbom.FromStored("", agbom.DefaultAgent, cs)
	if err != nil {
		t.Fatal(err)
	}
	c := d.Components[0]
	if c.ID != "urn:a2a:billing" || c.Type != agbom.TypeA2APeer || c.Name != "Billing" || c.Version != "2.1" || c.Provider != "Acme" ||
		c.A2APeerFields == nil || c.A2APeerFields.ProtocolVersion != "1.0" || c.Source != "a2a" {
		t.Fatalf("component = %+v", c)
	}
	if strings.Contains(c.Endpoint, "pw") || strings.Contains(c.Endpoint, "key=") {
		t.Fatalf("the endpoint carries credentials: %s", c.Endpoint)
	}
}
