package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/aos"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/hooks"
	"github.com/wardenhq/warden/jsonrpc"
)

// maxEvalInput bounds what eval reads from stdin, like the endpoint's body limit.
const maxEvalInput = jsonrpc.DefaultMaxBody

// cmdEval decides one event without a server or a trace, through the same
// core as every surface: `--event NAME` decides the catalog event NAME with
// the payload on stdin (as hooks dispatch and the Go API do); `--event aos`
// answers a whole AOS JSON-RPC request through the AOS endpoint's code.
func cmdEval(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("eval", stderr)
	event := fs.String("event", "", `catalog event name (e.g. steps/toolCallRequest, tool.pre_call), or "aos" for a whole AOS JSON-RPC request`)
	tenant := fs.String("tenant", "", "decide as a caller of this tenant (its policy set, from the config's tenants:)")
	gf := addGuardianFlags(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *event == "" {
		return fail(stderr, "eval: --event is required")
	}
	if *event != "aos" && !catalog.Known(*event) {
		return fail(stderr, "eval: unknown event %q (see `warden hooks events`)", *event)
	}
	in, err := io.ReadAll(io.LimitReader(stdin, maxEvalInput+1))
	if err != nil {
		return fail(stderr, "eval: reading stdin: %v", err)
	}
	if int64(len(in)) > maxEvalInput {
		return fail(stderr, "eval: input exceeds %d bytes", maxEvalInput)
	}
	gd, err := gf.open(nil, nil, nil)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	defer gd.Close(ctx)
	if *tenant != "" {
		if gd.TenantPolicies(*tenant) == nil {
			return fail(stderr, "eval: --tenant %q: the config declares no such tenant (tenants: %v)", *tenant, gd.Config().TenantNames())
		}
		ctx = warden.WithPrincipal(ctx, warden.Principal{Name: "warden eval", Tenant: *tenant})
	}
	if *event == "aos" {
		return evalAOS(ctx, gd, in, stdout, stderr)
	}
	payload, err := hooks.DecodePayload(in)
	if err != nil {
		return fail(stderr, "eval: payload: %v", err)
	}
	out, err := gd.Decide(ctx, &warden.Event{Name: *event, Payload: payload, Raw: in})
	if err != nil {
		return fail(stderr, "eval: %v", err)
	}
	held := out.Verdict
	out = out.WithoutHold()
	res := map[string]any{
		"decision": out.Verdict.String(), "reason": out.Reason, "reasonCode": out.ReasonCodes,
		"policyId": out.PolicyID, "policyVersion": out.PolicyVersion, "results": out.Results,
	}
	if held.Holds() {
		res["held"] = held.String()
	}
	if len(out.Labels) > 0 {
		res["labels"] = out.Labels // the session labels the step sets if taken
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

// evalAOS answers an AOS request through the endpoint's own code path and
// prints the response.
func evalAOS(ctx context.Context, gd *guardian.Guardian, req []byte, stdout, stderr io.Writer) int {
	h := aos.NewHandler(gd, aos.Options{Version: version, Logf: func(string, ...any) {}})
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
	var buf bytes.Buffer
	if err := json.Indent(&buf, resp, "", "  "); err != nil {
		buf.Write(resp)
	}
	buf.WriteByte('\n')
	_, _ = stdout.Write(buf.Bytes())
	if r.Result == nil {
		return exitOK // ping
	}
	return verdictExit(r.Result.Decision)
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
