package agbom

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/wardenhq/warden"
)

// The formats Render gives.
const (
	FormatCycloneDX = "cyclonedx" // CycloneDX 1.6 JSON (the default)
	FormatSPDX      = "spdx"      // SPDX 3.0.1 JSON-LD
	FormatACS       = "acs"       // the canonical components, as stored
)

// ContentType is the media type of a format.
func ContentType(format string) string {
	switch format {
	case FormatSPDX:
		return "application/spdx+json"
	case FormatCycloneDX:
		return "application/vnd.cyclonedx+json; version=1.6"
	}
	return "application/json"
}

// ErrFormat is the error of an unknown format.
var ErrFormat = errors.New(`format: want "cyclonedx", "spdx" or "acs"`)

// Render reads agent's AgBOM from st and serializes it in format ("":
// cyclonedx). ErrNoAgBOM when the agent has none; ErrFormat for an
// unknown format.
func Render(ctx context.Context, st Store, tenant, agent, format string) ([]byte, error) {
	if format == "" {
		format = FormatCycloneDX
	}
	if format != FormatCycloneDX && format != FormatSPDX && format != FormatACS {
		return nil, fmt.Errorf("%w, got %q", ErrFormat, format)
	}
	cs, err := st.AgBOM(ctx, tenant, agent)
	if err != nil {
		return nil, err
	}
	d, err := FromStored(tenant, agent, cs)
	if err != nil {
		return nil, err
	}
	switch format {
	case FormatSPDX:
		return SPDX(d)
	case FormatACS:
		return Canonical(d)
	}
	return CycloneDX(d)
}

// Canonical is d as the ACS canonical document: the agent, the time of
// its newest change and its components (warden's source of each in
// "warden_source").
func Canonical(d *Document) ([]byte, error) {
	type comp struct {
		*Component
		Source string `json:"warden_source"`
	}
	cs := make([]comp, len(d.Components))
	for i, c := range d.Components {
		cs[i] = comp{c, c.Source}
	}
	return marshal(struct {
		Agent      string `json:"agent_id"`
		Tenant     string `json:"tenant,omitempty"`
		Updated    string `json:"generated_at,omitempty"`
		Components []comp `json:"components"`
	}{d.Agent, d.Tenant, d.Updated, cs})
}

// Handler serves GET /api/agbom (scope read, checked by the server):
//
//   - ?agent=ID[&format=cyclonedx|spdx|acs][&tenant=T]: the agent's AgBOM;
//     404 when it has none, 400 for an unknown parameter or format;
//   - no agent: {"agents": [...]} — the caller's tenant's agents, or every
//     tenant's for a caller without a tenant (or only T's with tenant=T).
//
// A tenant's token reads only its tenant (naming another tenant is a 404,
// as if the agent were not there); a caller without a tenant reads the
// tenant it names ("" by default).
func Handler(st Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		for name, vs := range q {
			switch {
			case name != "agent" && name != "format" && name != "tenant":
				apiError(w, http.StatusBadRequest, fmt.Sprintf("%s: unknown parameter (want agent, format, tenant)", name))
				return
			case len(vs) != 1:
				apiError(w, http.StatusBadRequest, fmt.Sprintf("%s: given %d times", name, len(vs)))
				return
			}
		}
		own := warden.PrincipalFrom(r.Context()).Tenant
		tenant, named := own, q.Has("tenant")
		if named {
			tenant = q.Get("tenant")
		}
		agent, format := q.Get("agent"), q.Get("format")
		if q.Has("agent") && agent == "" {
			apiError(w, http.StatusBadRequest, "agent: empty (omit it to list the agents)")
			return
		}
		if agent == "" {
			if format != "" {
				apiError(w, http.StatusBadRequest, "format: only with agent")
				return
			}
			list := []Agent{}
			if own == "" || tenant == own {
				as, err := st.AgBOMAgents(r.Context(), tenant, own == "" && !named, 0)
				if err != nil {
					apiError(w, http.StatusInternalServerError, "listing the agents: "+err.Error())
					return
				}
				list = append(list, as...)
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"agents": list})
			return
		}
		var b []byte
		err := ErrNoAgBOM
		if own == "" || tenant == own {
			b, err = Render(r.Context(), st, tenant, agent, format)
		}
		switch {
		case errors.Is(err, ErrFormat):
			apiError(w, http.StatusBadRequest, err.Error())
		case errors.Is(err, ErrNoAgBOM):
			apiError(w, http.StatusNotFound, fmt.Sprintf("no AgBOM for agent %q", agent))
		case err != nil:
			apiError(w, http.StatusInternalServerError, "reading the AgBOM: "+err.Error())
		default:
			if format == "" {
				format = FormatCycloneDX
			}
			w.Header().Set("Content-Type", ContentType(format))
			_, _ = w.Write(b)
		}
	})
}

func apiError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
