package agbom_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wardenhq/warden/agbom"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/storetest"
)

func TestHandler(t *testing.T) {
	st := storetest.NewMem()
	ctx := context.Background()
	put := func(tenant, agent string) {
		u, err := agbom.FromACS(catalog.MethodAgBOMSnapshot, tenant, agent, map[string]any{"components": []any{
			map[string]any{"id": "m", "type": "model", "name": "M"}}}, at)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.UpdateAgBOM(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	put("", "a1")
	put("acme", "a2")
	h := agbom.Handler(st)
	get := func(tenant, query string) (int, string, string) {
		r := httptest.NewRequest(http.MethodGet, "/api/agbom"+query, nil)
		if tenant != "" {
			r = r.WithContext(warden.WithPrincipal(r.Context(), warden.Principal{Name: "reader", Tenant: tenant}))
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code, w.Header().Get("Content-Type"), w.Body.String()
	}
	for _, tc := range []struct {
		name, tenant, query string
		code                int
		ctype, body         string
	}{
		{"cyclonedx by default", "", "?agent=a1", 200, "application/vnd.cyclonedx+json; version=1.6", `"bomFormat": "CycloneDX"`},
		{"spdx", "", "?agent=a1&format=spdx", 200, "application/spdx+json", `"@context": "https://spdx.org/rdf/3.0.1/spdx-context.jsonld"`},
		{"acs", "", "?agent=a1&format=acs", 200, "application/json", `"agent_id": "a1"`},
		{"unknown agent", "", "?agent=nobody", 404, "application/json", `{"error":"no AgBOM for agent \"nobody\""}`},
		{"unknown format", "", "?agent=a1&format=swid", 400, "application/json", `format: want \"cyclonedx\", \"spdx\" or \"acs\", got \"swid\"`},
		{"unknown parameter", "", "?agent=a1&fmt=spdx", 400, "application/json", `fmt: unknown parameter`},
		{"empty agent", "", "?agent=", 400, "application/json", `agent: empty`},
		{"repeated", "", "?agent=a1&agent=a2", 400, "application/json", `agent: given 2 times`},
		{"format without agent", "", "?format=spdx", 400, "application/json", `format: only with agent`},
		{"list all tenants", "", "", 200, "application/json", `"tenant":"","id":"a1"`},
		{"list all tenants, acme too", "", "", 200, "application/json", `"tenant":"acme","id":"a2"`},
		{"tenant reads its agent", "acme", "?agent=a2", 200, "application/vnd.cyclonedx+json; version=1.6", `urn:agent:a2`},
		{"tenant cannot read another's", "acme", "?agent=a1", 404, "application/json", `no AgBOM for agent \"a1\"`},
		{"tenant naming another tenant", "acme", "?agent=a1&tenant=", 404, "application/json", `no AgBOM`},
		{"admin names a tenant", "", "?agent=a2&tenant=acme", 200, "application/vnd.cyclonedx+json; version=1.6", `urn:agent:a2`},
		{"tenant lists its own", "acme", "", 200, "application/json", `{"agents":[{"tenant":"acme","id":"a2"`},
		{"tenant lists another's", "acme", "?tenant=beta", 200, "application/json", `{"agents":[]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, ctype, body := get(tc.tenant, tc.query)
			if code != tc.code || ctype != tc.ctype || !strings.Contains(body, tc.body) {
				t.Fatalf("GET %s = %d %s %s; want %d %s containing %s", tc.query, code, ctype, body, tc.code, tc.ctype, tc.body)
			}
			if tc.code == 200 && !json.Valid([]byte(body)) {
				t.Fatal("not JSON")
			}
		})
	}
}
