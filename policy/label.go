package policy

import (
	"slices"

	"github.com/wardenhq/warden/labels"

	"gopkg.in/yaml.v3"
)

// parseLabels reads a policy's label: field, a list of session label names
// (or one name), each valid by labels.Valid, reporting every bad one
// at its line. The labels come back sorted, each once.
//
// A policy with label: sets those labels on its session when it matches
// and the step is taken (allowed or modified): the Decider keeps them.
// With no decision: it only labels — it does not vote, so a step it
// matches still gets the default decision when nothing else decides.
func parseLabels(file string, n *yaml.Node, errs *ErrorList) []string {
	var items []*yaml.Node
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			errs.Add(file, n.Line, n.Column, "label must be a non-empty list of label names, e.g. [untrusted_input]")
			return nil
		}
		items = []*yaml.Node{n}
	case yaml.SequenceNode:
		items = n.Content
	default:
		errs.Add(file, n.Line, n.Column, "label must be a non-empty list of label names, e.g. [untrusted_input]")
		return nil
	}
	if len(items) == 0 {
		errs.Add(file, n.Line, n.Column, "label must be a non-empty list of label names, e.g. [untrusted_input]")
		return nil
	}
	var out []string
	ok := true
	for i, it := range items {
		if it.Kind != yaml.ScalarNode || it.Tag != "!!str" {
			errs.Add(file, it.Line, it.Column, "label[%d]: a label name must be a string", i)
			ok = false
			continue
		}
		if err := labels.Valid(it.Value); err != nil {
			errs.Add(file, it.Line, it.Column, "label[%d]: %v", i, err)
			ok = false
			continue
		}
		out = append(out, it.Value)
	}
	if !ok {
		return nil
	}
	slices.Sort(out)
	return slices.Compact(out)
}
