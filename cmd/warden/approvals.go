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

	"github.com/wardenhq/warden/approval"

	"github.com/wardenhq/warden/internal/noredirect"
)

// approvalsTimeout bounds one approvals API call.
const approvalsTimeout = 30 * time.Second

// cmdApprovals is `warden approvals list|approve ID|deny ID` against a
// running server's approvals API (docs/approvals.md).
func cmdApprovals(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return fail(stderr, "approvals: expected list, approve ID or deny ID")
	}
	sub, rest := args[0], args[1:]
	fs := newFlags("approvals "+sub, stderr)
	server := fs.String("server", envOr("WARDEN_SERVER", "http://127.0.0.1:8787"), "the warden server's base URL ($WARDEN_SERVER)")
	token := fs.String("token", "", "a bearer token with the approve scope (or read, to list); default $WARDEN_TOKEN; prefer --token-file or the variable: a flag shows in ps")
	tokenFile := fs.String("token-file", "", "read the bearer token from this file")
	var state, reason, output *string
	switch sub {
	case "list":
		state = fs.String("state", "pending", "pending, approved, denied, expired or all")
		output = fs.String("o", "table", "table or json")
	case "approve", "deny":
		reason = fs.String("reason", "", "why (recorded with the decision)")
	default:
		return fail(stderr, "approvals: unknown subcommand %q (want list, approve ID or deny ID)", sub)
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
	if sub == "list" {
		return listApprovalsCmd(ctx, c, *state, *output, stdout, stderr)
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
	fmt.Fprintf(stdout, "%s %s (%s %s)\n", a.ID, a.State, a.Event, a.Tool)
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.State, a.Created.Local().Format(time.DateTime),
			a.Expires.Local().Format(time.TimeOnly), a.Surface, a.Event, a.Tool, a.PolicyID, cut(a.Summary, 60))
	}
	_ = tw.Flush()
	return exitOK
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
