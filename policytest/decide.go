package policytest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/labels"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/aos"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/hooks"
)

// decideEvent decides an event case as `warden eval --event NAME` does: the
// payload as a JSON object, no surface (the Go API's), views built by the
// core. A held outcome (ask, defer) is reported as held.
func (c *Case) decideEvent(ctx context.Context, g *guardian.Guardian, cr *CaseReport) error {
	payload, err := hooks.DecodePayload(c.Payload)
	if err != nil {
		return fmt.Errorf("payload: %w", err)
	}
	out, err := g.Decide(ctx, &warden.Event{Name: c.Event, Payload: payload, Raw: c.Payload,
		Envelope: warden.Envelope{ToolChanges: c.ToolChanges}})
	if err != nil {
		return fmt.Errorf("could not decide: %w", err)
	}
	cr.Decision, cr.Policy, cr.Reason, cr.Results = out.Verdict.String(), out.PolicyID, out.Reason, out.Results
	cr.Labels = out.Labels
	if out.Payload != nil {
		b, err := json.Marshal(out.Payload)
		if err != nil {
			return fmt.Errorf("the modified payload: %w", err)
		}
		cr.Output = string(b)
	}
	return nil
}

// decideAOS answers an AOS case through the AOS endpoint's handler, after
// its setup requests: the decision and message are the answer's, the
// deciding policy and the results the core's outcome for the request.
func (c *Case) decideAOS(ctx context.Context, g *guardian.Guardian, cr *CaseReport) error {
	rec := &recorder{g: g}
	h := aos.NewHandler(rec, aos.Options{Logf: func(string, ...any) {}})
	for i, req := range c.Setup {
		if _, err := answer(h.Handle(ctx, req)); err != nil {
			return fmt.Errorf("setup request %d: %w", i+1, err)
		}
	}
	rec.last = nil
	res, err := answer(h.Handle(ctx, c.AOS))
	if err != nil {
		return err
	}
	if res.Decision == "" {
		return fmt.Errorf("the answer has no decision (a ping?)")
	}
	cr.Decision, cr.Reason = res.Decision, res.Message
	if len(res.ModifiedRequest) > 0 {
		cr.Output = string(res.ModifiedRequest)
	}
	if rec.last != nil {
		cr.Policy, cr.Results, cr.Labels = rec.last.PolicyID, rec.last.Results, rec.last.Labels
	}
	return nil
}

// aosResult is the part of an AOS answer a case checks.
type aosResult struct {
	Decision        string          `json:"decision"`
	Message         string          `json:"message"`
	ModifiedRequest json.RawMessage `json:"modifiedRequest"`
}

// answer decodes an AOS response; a JSON-RPC error is an error.
func answer(resp []byte) (*aosResult, error) {
	if resp == nil {
		return nil, fmt.Errorf("the request has no id (a notification): nothing is answered")
	}
	var r struct {
		Result *aosResult `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(resp, &r); err != nil {
		return nil, fmt.Errorf("unexpected answer %s (a batch is not supported)", resp)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("answered with JSON-RPC error %d: %s", r.Error.Code, r.Error.Message)
	}
	if r.Result == nil {
		return nil, fmt.Errorf("answer without a result: %s", resp)
	}
	return r.Result, nil
}

// recorder is the core the AOS handler decides through: the Guardian,
// keeping the last outcome so a case can see its policy results.
type recorder struct {
	g    *guardian.Guardian
	last *warden.Outcome
}

var (
	_ warden.Core     = (*recorder)(nil)
	_ approval.Holder = (*recorder)(nil)
)

func (r *recorder) Decide(ctx context.Context, ev *warden.Event) (warden.Outcome, error) {
	out, err := r.g.Decide(ctx, ev)
	if err == nil {
		r.last = &out
	}
	return out, err
}

func (r *recorder) Await(ctx context.Context, out warden.Outcome) warden.Outcome {
	return r.g.Await(ctx, out)
}

// check returns what of e does not hold for the decided case.
func (e *Expect) check(cr *CaseReport) []string {
	var fails []string
	if cr.Decision != e.Decision {
		fails = append(fails, fmt.Sprintf("decision %s, want %s", cr.Decision, e.Decision))
	}
	if e.Policy != "" && cr.Policy != e.Policy {
		got := "no deciding policy"
		if cr.Policy != "" {
			got = fmt.Sprintf("policy %s", cr.Policy)
		}
		fails = append(fails, fmt.Sprintf("%s, want policy %s", got, e.Policy))
	}
	if e.Reason != "" && !strings.Contains(cr.Reason, e.Reason) {
		fails = append(fails, fmt.Sprintf("reason %q does not contain %q", cr.Reason, e.Reason))
	}
	for _, s := range e.OutputContains {
		if cr.Output == "" {
			fails = append(fails, fmt.Sprintf("no modified output, want one containing %q", s))
			break
		}
		if !strings.Contains(cr.Output, s) {
			fails = append(fails, fmt.Sprintf("output does not contain %q", s))
		}
	}
	for _, s := range e.OutputNotContains {
		if strings.Contains(cr.Output, s) {
			fails = append(fails, fmt.Sprintf("output contains %q", s))
		}
	}
	if e.Labels != nil && !slices.Equal(labels.Merge(*e.Labels, nil), labels.Merge(cr.Labels, nil)) {
		fails = append(fails, fmt.Sprintf("labels %q, want %q", labels.Merge(cr.Labels, nil), labels.Merge(*e.Labels, nil)))
	}
	return fails
}
