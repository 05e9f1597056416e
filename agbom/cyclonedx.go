package agbom

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
)

// Generator names warden as the serializations' tool; Version is set by
// the binary (cmd/warden) and is "dev" otherwise.
var (
	Generator = "warden"
	Version   = "dev"
)

// CycloneDX serializes d as a CycloneDX 1.6 JSON BOM, per the ACS
// "Extending CycloneDX" mapping (spec/docs/spec/inspect/extend_cyclonedx.md
// and inspect/format-mapping.json): the agent is metadata.component
// (bom-ref "urn:agent:<id>"); every canonical component keeps its id as
// bom-ref; models are "machine-learning-model" components, tools, agent
// capabilities and skills "application" components, memory stores "data"
// components, and MCP servers, A2A peers and knowledge sources services
// (CycloneDX has no "service" component type: they go to services[]).
// Canonical fields without a CycloneDX home are "acs:" properties; the pin
// state of an MCP tool is "warden:pin.*" properties. dependencies: the
// agent depends on every component; an MCP server on its tools; a
// capability or skill on the components it names (those in the BOM).
// The output is deterministic: the same Document gives the same bytes.
func CycloneDX(d *Document) ([]byte, error) {
	root := "urn:agent:" + d.Agent
	bom := cdxBOM{BOMFormat: "CycloneDX", SpecVersion: "1.6", Version: 1, Components: []cdxComponent{}}
	bom.Metadata.Timestamp = d.Updated
	bom.Metadata.Tools = &cdxTools{Components: []cdxComponent{{Type: "application", Name: Generator, Version: Version}}}
	bom.Metadata.Component = &cdxComponent{Type: "application", BOMRef: root, Name: d.Agent}
	have := map[string]bool{}
	for _, c := range d.Components {
		have[c.ID] = true
	}
	deps := []cdxDependency{{Ref: root, DependsOn: []string{}}}
	for _, c := range d.Components {
		deps[0].DependsOn = append(deps[0].DependsOn, c.ID)
		props := properties(c)
		name := c.Name
		if name == "" {
			name = c.ID
		}
		switch c.Type {
		case TypeMCPServer, TypeA2APeer, TypeKnowledgeSource:
			s := cdxService{BOMRef: c.ID, Name: name, Version: c.Version, Description: c.Description, Properties: props}
			if c.Provider != "" {
				s.Provider = &cdxOrg{Name: c.Provider}
			}
			if c.Endpoint != "" {
				s.Endpoints = []string{c.Endpoint}
			}
			if f := c.A2APeerFields; f != nil && f.AgentCardRef != "" {
				s.ExternalReferences = []cdxExtRef{{Type: "other", URL: f.AgentCardRef, Comment: "A2A agent card"}}
			}
			bom.Services = append(bom.Services, s)
		default:
			t := "application"
			switch c.Type {
			case TypeModel:
				t = "machine-learning-model"
			case TypeMemoryStore:
				t = "data"
			}
			comp := cdxComponent{Type: t, BOMRef: c.ID, Name: name, Version: c.Version, Description: c.Description, Properties: props}
			if c.Provider != "" {
				comp.Supplier = &cdxOrg{Name: c.Provider}
			}
			bom.Components = append(bom.Components, comp)
		}
		if refs := uses(c, have); len(refs) > 0 {
			deps = append(deps, cdxDependency{Ref: c.ID, DependsOn: refs})
		}
	}
	sort.Strings(deps[0].DependsOn)
	bom.Dependencies = deps
	return marshal(bom)
}

// uses are the ids c depends on that the document holds, sorted, unique.
func uses(c *Component, have map[string]bool) []string {
	var ids []string
	if f := c.MCPServerFields; f != nil {
		ids = append(ids, f.Tools...)
	}
	for _, f := range []*RefFields{c.AgentCapabilityFields, c.SkillFields} {
		if f != nil {
			ids = append(ids, f.Tools...)
			ids = append(ids, f.MCPServers...)
			ids = append(ids, f.A2APeers...)
			ids = append(ids, f.Models...)
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if have[id] && !seen[id] && id != c.ID {
			seen[id] = true
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// properties are c's canonical fields without a home in either format, as
// name/value pairs sorted by name.
func properties(c *Component) []cdxProperty {
	var ps []cdxProperty
	add := func(n, v string) {
		if v != "" {
			ps = append(ps, cdxProperty{Name: n, Value: v})
		}
	}
	add("acs:type", c.Type)
	if c.Type == TypeModel || c.Type == TypeTool || c.Type == TypeMemoryStore {
		add("acs:endpoint", c.Endpoint)
	}
	if f := c.ModelFields; f != nil {
		add("acs:context_window", strconv.FormatInt(f.ContextWindow, 10))
		if len(f.Args) > 0 {
			b, _ := json.Marshal(f.Args) // decoded JSON always encodes
			add("acs:args", string(b))
		}
	}
	if f := c.A2APeerFields; f != nil {
		add("acs:protocol_version", f.ProtocolVersion)
	}
	if f := c.ToolFields; f != nil {
		add("acs:capability", f.Capability)
	}
	if f := c.KnowledgeSourceFields; f != nil {
		add("acs:source_type", f.SourceType)
		add("acs:schema_ref", f.SchemaRef)
	}
	if f := c.MemoryStoreFields; f != nil {
		add("acs:scope", f.Scope)
		add("acs:store_type", f.StoreType)
		add("acs:path", f.Path)
		if f.WindowSize != nil {
			add("acs:window_size", strconv.FormatInt(*f.WindowSize, 10))
		}
	}
	if p := c.RegistrationProvenance; p != nil {
		for _, k := range []string{"origin", "source_id"} {
			if s, ok := p[k].(string); ok {
				add("acs:registration_provenance."+k, s)
			}
		}
	}
	if p := c.Pin; p != nil {
		add("warden:pin.state", p.State)
		add("warden:pin.hash", p.Hash)
		add("warden:pin.observed", p.Observed)
	}
	add("warden:source", c.Source)
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	return ps
}

type cdxBOM struct {
	BOMFormat    string          `json:"bomFormat"`
	SpecVersion  string          `json:"specVersion"`
	Version      int             `json:"version"`
	Metadata     cdxMetadata     `json:"metadata"`
	Components   []cdxComponent  `json:"components"`
	Services     []cdxService    `json:"services,omitempty"`
	Dependencies []cdxDependency `json:"dependencies"`
}

type cdxMetadata struct {
	Timestamp string        `json:"timestamp,omitempty"`
	Tools     *cdxTools     `json:"tools,omitempty"`
	Component *cdxComponent `json:"component,omitempty"`
}

type cdxTools struct {
	Components []cdxComponent `json:"components"`
}

type cdxComponent struct {
	Type        string        `json:"type"`
	BOMRef      string        `json:"bom-ref,omitempty"`
	Supplier    *cdxOrg       `json:"supplier,omitempty"`
	Name        string        `json:"name"`
	Version     string        `json:"version,omitempty"`
	Description string        `json:"description,omitempty"`
	Properties  []cdxProperty `json:"properties,omitempty"`
}

type cdxService struct {
	BOMRef             string        `json:"bom-ref"`
	Provider           *cdxOrg       `json:"provider,omitempty"`
	Name               string        `json:"name"`
	Version            string        `json:"version,omitempty"`
	Description        string        `json:"description,omitempty"`
	Endpoints          []string      `json:"endpoints,omitempty"`
	ExternalReferences []cdxExtRef   `json:"externalReferences,omitempty"`
	Properties         []cdxProperty `json:"properties,omitempty"`
}

type cdxOrg struct {
	Name string `json:"name"`
}

type cdxExtRef struct {
	Type    string `json:"type"`
	URL     string `json:"url"`
	Comment string `json:"comment,omitempty"`
}

type cdxProperty struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type cdxDependency struct {
	Ref       string   `json:"ref"`
	DependsOn []string `json:"dependsOn"`
}

// marshal is indented JSON without HTML escaping, with a final newline.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
