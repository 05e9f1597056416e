package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/aos"
)

// maxEvalInput bounds what eval reads from stdin, like the endpoint's body limit.
const maxEvalInput = aos.DefaultMaxBody

func cmdEval(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("eval", stderr)
	event := fs.String("event", "", `event name (e.g. steps/toolCallRequest), or "aos" for a whole AOS JSON-RPC request`)
	configPath := fs.String("config", "", "config file (YAML)")
	policies := addPolicyFlags(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *event == "" {
		return fail(stderr, "eval: --event is required")
	}
	in, err := io.ReadAll(io.LimitReader(stdin, maxEvalInput+1))
	if err != nil {
		return fail(stderr, "eval: reading stdin: %v", err)
	}
	if int64(len(in)) > maxEvalInput {
		return fail(stderr, "eval: input exceeds %d bytes", maxEvalInput)
	}
	s, err := loadSetup(*configPath, policies)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError
	}
	dec, _, _, err := s.decider(nil, nil)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	isAOS := slices.Contains(aos.StepMethods, *event) || slices.Contains(aos.A2AHookMethods, *event) ||
		*event == aos.MethodMCP || *event == aos.MethodA2A
	switch {
	case *event == "aos":
		return evalAOS(ctx, dec, in, false, stdout, stderr)
	case isAOS:
		// The payload is the method's params: wrap it as a request.
		req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "eval", "method": *event, "params": json.RawMessage(in)})
		if err != nil {
			return fail(stderr, "eval: payload is not JSON: %v", err)
		}
		return evalAOS(ctx, dec, req, true, stdout, stderr)
	}
	return evalGeneric(ctx, dec, *event, in, stdout, stderr)
}

// evalAOS answers an AOS request through the endpoint's own code path and
// prints the response (or, for a wrapped payload, its result).
func evalAOS(ctx context.Context, dec *warden.Decider, req []byte, resultOnly bool, stdout, stderr io.Writer) int {
	h := aos.NewHandler(dec, aos.Options{Version: version, Logf: func(string, ...any) {}})
	resp := h.Handle(ctx, req)
	if resp == nil {
		return fail(stderr, "eval: the request is a notification (no id): nothing to answer")
	}
	var r struct {
		Result *struct {
			Decision string `json:"decision"`
		} `json:"result"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(resp, &r); err != nil {
		return fail(stderr, "eval: a batch is not supported; send one request")
	}
	if r.Error != nil {
		return fail(stderr, "eval: %s (JSON-RPC error %d)", r.Error.Message, r.Error.Code)
	}
	out := resp
	if resultOnly {
		var full map[string]json.RawMessage
		_ = json.Unmarshal(resp, &full)
		out = full["result"]
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, out, "", "  "); err != nil {
		buf.Write(out)
	}
	buf.WriteByte('\n')
	_, _ = stdout.Write(buf.Bytes())
	if r.Result == nil {
		return exitOK // ping
	}
	return verdictExit(r.Result.Decision)
}

// evalGeneric decides an event that is not an AOS method (a hook event): the
// payload is the event's JSON object.
func evalGeneric(ctx context.Context, dec *warden.Decider, name string, in []byte, stdout, stderr io.Writer) int {
	var payload map[string]any
	if err := json.Unmarshal(in, &payload); err != nil {
		return fail(stderr, "eval: payload must be a JSON object: %v", err)
	}
	ev := &warden.Event{Name: name, Surface: warden.SurfaceSDK, Payload: payload, Raw: in,
		Tool: warden.Tool{Args: map[string]any{}}}
	out, err := dec.Decide(ctx, ev)
	if err != nil {
		return fail(stderr, "eval: %v", err)
	}
	res := map[string]any{
		"decision": out.Verdict.String(), "reason": out.Reason, "reasonCode": out.ReasonCodes,
		"policyId": out.PolicyID, "policyVersion": out.PolicyVersion, "results": out.Results,
	}
	if out.Verdict == warden.Modify {
		res["payload"] = out.Payload
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		return fail(stderr, "eval: %v", err)
	}
	return verdictExit(out.Verdict.String())
}

func verdictExit(decision string) int {
	switch decision {
	case "deny":
		return exitDeny
	case "modify":
		return exitModify
	}
	return exitOK
}
