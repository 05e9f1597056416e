package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/guardian"
)

// `warden detect eval --pack` decides every row's text as one AOS step
// through a Guardian with the built-in pack, as `warden serve` opens it
// without --config or --policy, and counts a row as detected when the
// step is held: denied, asked or deferred (a modify forwards the step,
// changed: a redaction is not a detection). See detectEvalHelp.

// packExecutionID is the executionId of the steps/toolCallResult a row's
// text arrives in (the AOS schema requires one): a string, and so part of
// the text the policies read, as a client's id would be over HTTP.
const packExecutionID = "detect-eval"

// packTopPolicies is how many of the policies that decided the detected
// rows a source reports.
const packTopPolicies = 3

// packEvents are the AOS step events `detect eval --event` can carry a
// row's text in: those the built-in pack guards for injection
// (policy/pack/30-injection.yaml). Each makes the step's params as an AOS
// client sends them over HTTP, the text where the step carries retrieved
// content: a tool result's output part, a knowledge result's content, a
// retrieved memory. CEL's text is every string of the params but the
// context (warden.Event.Text), so it holds the row's text.
var packEvents = map[string]func(text string) map[string]any{
	catalog.MethodToolCallResult: func(text string) map[string]any {
		return map[string]any{"context": map[string]any{}, "toolCallResult": map[string]any{
			"executionId": packExecutionID,
			"result": map[string]any{
				"outputs": []any{map[string]any{"kind": "text", "text": text}},
				"isError": false,
			},
		}}
	},
	catalog.MethodKnowledgeRetrieval: func(text string) map[string]any {
		return map[string]any{"context": map[string]any{}, "knowledgeStep": map[string]any{
			"results": []any{map[string]any{"content": text, "mimeType": "text/plain"}},
		}}
	},
	catalog.MethodMemoryContextRetrieval: func(text string) map[string]any {
		return map[string]any{"context": map[string]any{}, "memory": []any{text}}
	},
}

// packEventNames lists packEvents' names, sorted, for help and errors.
func packEventNames() string { return strings.Join(slices.Sorted(maps.Keys(packEvents)), ", ") }

// packEvent is the event the AOS endpoint builds for a request of method
// event with the params packEvents makes of text (aos.Handler's decodeEvent
// for a steps/* method): the params validated as the endpoint validates
// them, the surface AOS, the request id the row's line. The views are
// left to the Guardian, which builds them for every surface alike.
func packEvent(event, text string, line int) (*warden.Event, error) {
	params, ok := packEvents[event]
	if !ok {
		return nil, fmt.Errorf("--event %q: want one of %s", event, packEventNames())
	}
	p := params(text)
	if err := catalog.CheckStepParams(event, p); err != nil {
		return nil, fmt.Errorf("%s params: %s: %s", event, err.Field, err.Reason)
	}
	return &warden.Event{Name: event, Surface: warden.SurfaceAOS, RequestID: strconv.Itoa(line), Payload: p}, nil
}

// packJudge decides rows' texts as event steps through d.
type packJudge struct {
	d     warden.Core
	event string
}

// openPackGuardian opens the Guardian `warden serve` opens without
// --config, --policy or --builtin=false: the default configuration and
// the embedded built-in pack (guardianFlags' defaults), with no trace — so
// nothing is written, no redaction key or sealing KEK is made, no
// exporter started.
func openPackGuardian() (*guardian.Guardian, error) {
	return addGuardianFlags(flag.NewFlagSet("detect eval --pack", flag.ContinueOnError)).open(nil, nil, nil)
}

// judge decides text, the row at line: detected when the step is held
// (deny, ask or defer; not allow, abstain or modify), with the id of the
// policy that decided it ("(no policy)" when none is named).
func (j *packJudge) judge(ctx context.Context, text string, line int) (detected bool, policyID string, err error) {
	ev, err := packEvent(j.event, text, line)
	if err != nil {
		return false, "", err
	}
	out, err := j.d.Decide(ctx, ev)
	if err != nil {
		return false, "", fmt.Errorf("deciding the row as %s: %w", j.event, err)
	}
	if out.Verdict == warden.Allow || out.Verdict == warden.Abstain || out.Verdict == warden.Modify {
		return false, "", nil
	}
	if out.PolicyID == "" {
		return true, "(no policy)", nil
	}
	return true, out.PolicyID, nil
}

// topPolicies returns the n policies of counts that decided the most
// rows, ties by id; nil when counts is empty.
func topPolicies(counts map[string]int, n int) []string {
	ids := slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b))
	})
	return ids[:min(n, len(ids))]
}

// packResult is one source's line of `warden detect eval --pack -o json`:
// evalResult's members, the threshold null (the pack's policies decide,
// not a score's threshold), and how the rows were decided.
type packResult struct {
	evalResult
	Threshold *float64       `json:"threshold"` // always null
	Via       string         `json:"via"`       // "pack"
	Event     string         `json:"event"`     // the AOS step event of every row
	Policies  map[string]int `json:"policies"`  // the top policies that decided the detected rows, with their counts
}

func (s *evalStats) packResult(source, event string) packResult {
	r := packResult{evalResult: s.result(source, "pack", 0), Via: "pack", Event: event, Policies: map[string]int{}}
	for _, id := range topPolicies(s.Policies, packTopPolicies) {
		r.Policies[id] = s.Policies[id]
	}
	return r
}

// policiesLine is a source's policies in the text output: "id (n), …",
// the top ones, or "" when no row was detected.
func policiesLine(counts map[string]int) string {
	var parts []string
	for _, id := range topPolicies(counts, packTopPolicies) {
		parts = append(parts, fmt.Sprintf("%s (%d)", printable(id), counts[id]))
	}
	return strings.Join(parts, ", ")
}
