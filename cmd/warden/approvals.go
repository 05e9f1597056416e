package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/wardenhq/warden/approval"

	"github.com/wardenhq/warden/internal/noredirect"
)

// approvalsTimeout bounds one approvals API call.
const approvalsTimeout = 30 * time.Second

// approvalsUsage is `warden approvals --help`.
const approvalsUsage = `Usage:
  warden approvals list [--state pending|approved|denied|expired|all] [-o table|json]
  warden approvals show ID [-o table|json]
  warden approvals approve ID [--reason R]
  warden approvals deny ID [--reason R]
Each also takes --server URL (default $WARDEN_SERVER, else http://127.0.0.1:8787) and a
token from $WARDEN_TOKEN, --token-file F or --token T.

Lists, shows and decides the approvals of a running warden server, through its
approvals API (docs/approvals.md). A token with the approve scope (or unseal, or
admin) sees each approval's summary, reason and — with show — the input of the
step that asked as the agent sent them: the sealed originals of redacted values,
each view recorded in the trace. A read token sees them redacted.

Run 'warden approvals SUBCOMMAND --help' for a subcommand's flags.
`

// approvalsSubUsage is the first line of each subcommand's --help.
var approvalsSubUsage = map[string]string{
	"list":    "warden approvals list [flags]: the approvals, newest first (originals for an approve token)",
	"show":    "warden approvals show ID [flags]: one approval and the input of the step that asked it (originals for an approve token)",
	"approve": "warden approvals approve ID [flags]: approve a pending approval",
	"deny":    "warden approvals deny ID [flags]: deny a pending approval",
}

// cmdApprovals is `warden approvals list|show ID|approve ID|deny ID`
// against a running server's approvals API (docs/approvals.md).
func cmdApprovals(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return fail(stderr, "approvals: expected list, show ID, approve ID or deny ID (run 'warden approvals --help')")
	}
	if wantsHelp(args[:1]) || args[0] == "help" {
		fmt.Fprint(stdout, approvalsUsage)
		return exitOK
	}
	sub, rest := args[0], args[1:]
	fs := newFlags("approvals "+sub, stderr)
	server := fs.String("server", envOr("WARDEN_SERVER", "http://127.0.0.1:8787"), "the warden server's base URL ($WARDEN_SERVER)")
	token := fs.String("token", "", "a bearer token with the approve scope (or read, to list and show redacted); default $WARDEN_TOKEN; prefer --token-file or the variable: a flag shows in ps")
	tokenFile := fs.String("token-file", "", "read the bearer token from this file")
	var state, reason, output *string
	switch sub {
	case "list":
		state = fs.String("state", "pending", "pending, approved, denied, expired or all")
		output = fs.String("o", "table", "table or json")
	case "show":
		output = fs.String("o", "table", "table (one field a line, the input as indented JSON) or json (the API's answer)")
	case "approve", "deny":
		reason = fs.String("reason", "", "why (recorded with the decision)")
	default:
		return fail(stderr, "approvals: unknown subcommand %q (want list, show ID, approve ID or deny ID)", sub)
	}
	if wantsHelp(rest) {
		fmt.Fprintf(stdout, "Usage: %s\n\nFlags:\n", approvalsSubUsage[sub])
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return exitOK
	}
	var id string
	if sub != "list" {
		// The id may come before or after the flags.
		if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
			id, rest = rest[0], rest[1:]
		}
	}
	if code, ok := parseFlags(fs, rest); !ok {
		return code
	}
	if sub != "list" && id == "" && fs.NArg() == 1 {
		id = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return fail(stderr, "approvals %s: unexpected argument %q", sub, fs.Arg(0))
	}
	if sub != "list" && id == "" {
		return fail(stderr, "approvals %s: the approval id is required", sub)
	}
	tok := *token
	if tok == "" && *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return fail(stderr, "approvals: --token-file: %v", err)
		}
		tok = strings.TrimSpace(string(b))
	}
	if tok == "" {
		tok = os.Getenv("WARDEN_TOKEN")
	}
	base, err := url.Parse(strings.TrimSuffix(*server, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return fail(stderr, "approvals: --server: expected an http(s) URL, got %q", *server)
	}
	c := apiClient{base: base.String(), token: tok}
	ctx, cancel := context.WithTimeout(context.Background(), approvalsTimeout)
	defer cancel()
	switch sub {
	case "list":
		return listApprovalsCmd(ctx, c, *state, *output, stdout, stderr)
	case "show":
		return showApprovalCmd(ctx, c, id, *output, stdout, stderr)
	}
	decision := "approve"
	if sub == "deny" {
		decision = "deny"
	}
	body, _ := json.Marshal(map[string]string{"decision": decision, "reason": *reason})
	var a approval.Approval
	code, msg, err := c.do(ctx, http.MethodPost, "/api/approvals/"+url.PathEscape(id), body, &a)
	if err != nil {
		return fail(stderr, "approvals %s: %v", sub, err)
	}
	if code != http.StatusOK {
		return fail(stderr, "approvals %s %s: %s", sub, id, msg)
	}
	fmt.Fprintf(stdout, "%s %s (%s %s)\n", a.ID, a.State, printable(a.Event), printable(a.Tool))
	return exitOK
}

func listApprovalsCmd(ctx context.Context, c apiClient, state, output string, stdout, stderr io.Writer) int {
	q := url.Values{"limit": {strconv.Itoa(approval.MaxListLimit)}}
	if state != "all" {
		q.Set("state", state)
	}
	var page struct {
		Approvals []approval.Approval `json:"approvals"`
	}
	code, msg, err := c.do(ctx, http.MethodGet, "/api/approvals?"+q.Encode(), nil, &page)
	if err != nil {
		return fail(stderr, "approvals list: %v", err)
	}
	if code != http.StatusOK {
		return fail(stderr, "approvals list: %s", msg)
	}
	if output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(page.Approvals)
		return exitOK
	}
	if output != "table" {
		return fail(stderr, "approvals list: -o: expected table or json, got %q", output)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tCREATED\tEXPIRES\tSURFACE\tEVENT\tTOOL\tPOLICY\tSUMMARY")
	for _, a := range page.Approvals {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", printable(a.ID), a.State, a.Created.Local().Format(time.DateTime),
			a.Expires.Local().Format(time.TimeOnly), printable(a.Surface), printable(a.Event), printable(a.Tool), printable(a.PolicyID),
			cut(printable(a.Summary), 60))
	}
	_ = tw.Flush()
	return exitOK
}

// shownApproval is GET /api/approvals/{id}'s answer: the approval and the
// input of the step that asked it.
type shownApproval struct {
	approval.Approval
	Input json.RawMessage `json:"input"`
}

// showApprovalCmd is `warden approvals show ID`: the approval one field a
// line, then the asking step's input as indented JSON (-o table), or the
// API's answer as it is, indented (-o json).
func showApprovalCmd(ctx context.Context, c apiClient, id, output string, stdout, stderr io.Writer) int {
	if output != "table" && output != "json" {
		return fail(stderr, "approvals show: -o: expected table or json, got %q", output)
	}
	var raw json.RawMessage
	code, msg, err := c.do(ctx, http.MethodGet, "/api/approvals/"+url.PathEscape(id), nil, &raw)
	if err != nil {
		return fail(stderr, "approvals show: %v", err)
	}
	if code != http.StatusOK {
		return fail(stderr, "approvals show %s: %s", id, msg)
	}
	if output == "json" {
		var b bytes.Buffer
		if err := json.Indent(&b, raw, "", "  "); err != nil {
			return fail(stderr, "approvals show: decoding the answer: %v", err)
		}
		b.WriteByte('\n')
		_, _ = stdout.Write(b.Bytes())
		return exitOK
	}
	var a shownApproval
	if err := json.Unmarshal(raw, &a); err != nil {
		return fail(stderr, "approvals show: decoding the answer: %v", err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	field := func(name, value string) {
		if value != "" {
			fmt.Fprintf(tw, "%s\t%s\n", name, printable(value))
		}
	}
	when := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Local().Format(time.DateTime)
	}
	field("ID", a.ID)
	field("STATE", string(a.State))
	field("CREATED", when(a.Created))
	field("EXPIRES", when(a.Expires))
	field("SURFACE", a.Surface)
	field("EVENT", a.Event)
	field("TOOL", a.Tool)
	field("POLICY", a.PolicyID)
	field("SESSION", a.SessionID)
	field("AGENT", a.AgentID)
	field("CALLER", a.Caller)
	field("TENANT", a.Tenant)
	if a.Hold {
		field("HOLD", "the call waits for the decision")
	}
	field("SUMMARY", a.Summary)
	field("REASON", a.Reason)
	field("DECIDED BY", a.DecidedBy)
	field("DECIDED AT", when(a.DecidedAt))
	field("DECIDED WHY", a.DecidedReason)
	field("RECORD", a.RecordID)
	_ = tw.Flush()
	switch {
	case len(a.Input) == 0 || string(a.Input) == "null":
		fmt.Fprintln(stdout, "INPUT (not in the trace)")
	default:
		var b bytes.Buffer
		if json.Indent(&b, a.Input, "  ", "  ") != nil {
			b.Reset()
			b.WriteString(printable(string(a.Input)))
		}
		fmt.Fprintf(stdout, "INPUT\n  %s\n", b.Bytes())
	}
	return exitOK
}

// printable returns s with each control character, and each character
// that reorders text on a terminal (bidirectional overrides and
// isolates), written as a \u escape: an approval's texts are what an
// agent sent, shown as it sent them to an approver, and must not drive
// the approver's terminal.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if hidden(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if hidden(r) {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func hidden(r rune) bool {
	return unicode.IsControl(r) || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == utf8.RuneError
}

// wantsHelp reports whether args ask for help (-h, -help, --help) before
// a "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help", "--h":
			return true
		}
	}
	return false
}

func cut(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// apiClient calls a warden server's JSON API with a bearer token.
type apiClient struct{ base, token string }

// apiHTTP is apiClient's HTTP client: it follows no redirect.
var apiHTTP = noredirect.Client(nil)

// do sends one request; it returns the status and, for an error status,
// the server's error message; a 2xx body is decoded into out.
func (c apiClient) do(ctx context.Context, method, path string, body []byte, out any) (int, string, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, "", err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	// A redirect is not followed: Go keeps the bearer token on a redirect
	// to another port of the same host.
	resp, err := apiHTTP.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return 0, "", err
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return resp.StatusCode, fmt.Sprintf("%s (HTTP %d)", e.Error, resp.StatusCode), nil
		}
		return resp.StatusCode, fmt.Sprintf("HTTP %d: %s", resp.StatusCode, cut(strings.TrimSpace(string(b)), 200)), nil
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, "", fmt.Errorf("decoding the answer: %w", err)
		}
	}
	return resp.StatusCode, "", nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
