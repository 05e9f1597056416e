package agbom

import (
	"net/url"
	"sort"
	"strings"
)

// SPDXContext is the JSON-LD context of SPDX 3.0.1.
const SPDXContext = "https://spdx.org/rdf/3.0.1/spdx-context.jsonld"

// SPDX serializes d as an SPDX 3.0.1 JSON-LD document, per the ACS
// "Extending SPDX" mapping (spec/docs/spec/inspect/extend_spdx.md): one
// CreationInfo (created: the AgBOM's newest change; createdBy: warden as a
// SoftwareAgent), an SpdxDocument whose root element is the agent (a
// software_Package, spdxId "urn:agent:<id>"), and one element per
// component — models as ai_AIPackage, everything else as
// software_Package. SPDX 3.0 has no Service class (the mapping names
// one): MCP servers, A2A peers, knowledge sources and memory stores are
// software_Package elements with software_primaryPurpose "other" (memory
// stores "data") and the canonical type in their comment. Relationships:
// the agent dependsOn every component; an MCP server contains its tools; a
// capability or skill contains the components it names. Element ids are
// "urn:warden:agbom:<agent>:<component id>" (escaped), so the output is
// deterministic.
func SPDX(d *Document) ([]byte, error) {
	created := d.Updated
	if created == "" {
		created = "1970-01-01T00:00:00Z"
	}
	const ci = "_:creationinfo"
	prefix := "urn:warden:agbom:" + url.PathEscape(d.Agent) + ":"
	toolID := "urn:warden:tool:" + url.PathEscape(Generator)
	root := prefix + "agent"
	elemID := func(id string) string { return prefix + "c:" + url.PathEscape(id) }
	graph := []map[string]any{
		{"type": "CreationInfo", "@id": ci, "specVersion": "3.0.1", "created": created, "createdBy": []string{toolID}},
		{"type": "SoftwareAgent", "spdxId": toolID, "creationInfo": ci, "name": Generator + " " + Version},
	}
	elems := []string{root}
	have := map[string]bool{}
	for _, c := range d.Components {
		have[c.ID] = true
	}
	var rels []map[string]any
	agent := map[string]any{"type": "software_Package", "spdxId": root, "creationInfo": ci, "name": d.Agent,
		"software_primaryPurpose": "application", "comment": "the agent (urn:agent:" + d.Agent + ")"}
	graph = append(graph, agent)
	var deps []string
	for _, c := range d.Components {
		id := elemID(c.ID)
		elems = append(elems, id)
		deps = append(deps, id)
		name := c.Name
		if name == "" {
			name = c.ID
		}
		e := map[string]any{"spdxId": id, "creationInfo": ci, "name": name}
		var notes []string
		notes = append(notes, "acs:id="+c.ID, "acs:type="+c.Type)
		for _, p := range properties(c) {
			if p.Name != "acs:type" {
				notes = append(notes, p.Name+"="+p.Value)
			}
		}
		if c.Type == TypeModel {
			e["type"] = "ai_AIPackage"
			e["software_primaryPurpose"] = "model"
		} else {
			e["type"] = "software_Package"
			switch c.Type {
			case TypeTool, TypeAgentCapability, TypeSkill:
				e["software_primaryPurpose"] = "application"
			case TypeMemoryStore:
				e["software_primaryPurpose"] = "data"
			default:
				e["software_primaryPurpose"] = "other"
			}
		}
		if c.Version != "" {
			e["software_packageVersion"] = c.Version
		}
		if c.Description != "" {
			e["description"] = c.Description
		}
		if c.Endpoint != "" {
			e["software_downloadLocation"] = c.Endpoint
		}
		if c.Provider != "" {
			e["software_sourceInfo"] = "provider: " + c.Provider
		}
		e["comment"] = strings.Join(notes, "; ")
		if f := c.A2APeerFields; f != nil && f.AgentCardRef != "" {
			e["externalRef"] = []map[string]any{{"type": "ExternalRef", "externalRefType": "other",
				"locator": []string{f.AgentCardRef}, "comment": "A2A agent card"}}
		}
		graph = append(graph, e)
		if refs := uses(c, have); len(refs) > 0 {
			to := make([]string, len(refs))
			for i, r := range refs {
				to[i] = elemID(r)
			}
			rels = append(rels, map[string]any{"type": "Relationship", "spdxId": id + ":contains", "creationInfo": ci,
				"from": id, "relationshipType": "contains", "to": to})
		}
	}
	if len(deps) > 0 {
		sort.Strings(deps)
		rels = append([]map[string]any{{"type": "Relationship", "spdxId": root + ":dependsOn", "creationInfo": ci,
			"from": root, "relationshipType": "dependsOn", "to": deps}}, rels...)
	}
	for _, r := range rels {
		elems = append(elems, r["spdxId"].(string))
		graph = append(graph, r)
	}
	sort.Strings(elems)
	doc := map[string]any{"type": "SpdxDocument", "spdxId": prefix + "document", "creationInfo": ci,
		"name": "AgBOM of " + d.Agent, "rootElement": []string{root}, "element": elems,
		"profileConformance": []string{"core", "software", "ai"}}
	graph = append(graph[:2], append([]map[string]any{doc}, graph[2:]...)...)
	return marshal(map[string]any{"@context": SPDXContext, "@graph": graph})
}
