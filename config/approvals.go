package config

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/wardenhq/warden/hooks"
	"github.com/wardenhq/warden/notify"
)

// Approvals is the approvals: section (docs/approvals.md): how long a step that
// asks waits for a human, and whom to tell.
type Approvals struct {
	// Wait is how long the surfaces that hold a call (MCP, A2A, hooks
	// dispatch) hold it for a decision before denying it with
	// approval_timeout (approvals.wait; 1s..15m, default 2m).
	Wait time.Duration
	// TTL is how long after an approval an AOS step answered at once may
	// be retried, once (approvals.ttl; 1s..24h, default 15m).
	TTL time.Duration
	// URL is the console's external base URL for links in notifications,
	// without a trailing slash; "" when not configured (approvals.url).
	URL string
	// Notify are the webhooks told about each new approval
	// (approvals.notify), ${VAR}-expanded; their headers are secrets.
	Notify []notify.Target
}

// The bounds and defaults of approvals.wait and approvals.ttl.
const (
	DefaultApprovalWait = 2 * time.Minute
	MinApprovalWait     = time.Second
	MaxApprovalWait     = 15 * time.Minute
	DefaultApprovalTTL  = 15 * time.Minute
	MinApprovalTTL      = time.Second
	MaxApprovalTTL      = 24 * time.Hour
)

// DefaultApprovals is the approvals section of a config that has none.
func DefaultApprovals() Approvals {
	return Approvals{Wait: DefaultApprovalWait, TTL: DefaultApprovalTTL}
}

// approvalKeys and webhookKeys list the keys, for messages.
const (
	approvalKeys = "wait, ttl, url, notify"
	webhookKeys  = "url, format, headers"
)

// parseApprovals reads `approvals: {wait, ttl, url, notify}` over the
// defaults.
func parseApprovals(file string, v *yaml.Node) (Approvals, ErrorList) {
	ap := DefaultApprovals()
	var errs ErrorList
	add := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, Error{File: file, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
	}
	if v.Kind != yaml.MappingNode {
		add(v, "approvals: expected a mapping with %s", approvalKeys)
		return ap, errs
	}
	dur := func(n *yaml.Node, key string, dst *time.Duration, lo, hi time.Duration, example string) {
		if d, msg := boundedDuration(n, "approvals."+key, lo, hi, example); msg != "" {
			add(n, "%s", msg)
		} else {
			*dst = d
		}
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, n := v.Content[i], v.Content[i+1]
		switch k.Value {
		case "wait":
			dur(n, k.Value, &ap.Wait, MinApprovalWait, MaxApprovalWait, "2m")
		case "ttl":
			dur(n, k.Value, &ap.TTL, MinApprovalTTL, MaxApprovalTTL, "15m")
		case "url":
			if n.Kind != yaml.ScalarNode || n.Value == "" {
				add(n, "approvals.url: expected the console's external base URL, such as https://warden.example.com")
				continue
			}
			u, err := hooks.ExpandEnv(n.Value)
			if err != nil {
				add(n, "approvals.url: %v", err)
				continue
			}
			pu, err := url.Parse(u)
			if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
				add(n, "approvals.url: expected an http(s) URL, got %q", n.Value)
				continue
			}
			if pu.User != nil || pu.RawQuery != "" || pu.ForceQuery || pu.Fragment != "" {
				add(n, "approvals.url: expected a base URL without user info, query or fragment, got %q", n.Value)
				continue
			}
			ap.URL = strings.TrimRight(u, "/")
		case "notify":
			ts, terrs := parseNotify(file, n)
			errs = append(errs, terrs...)
			ap.Notify = ts
		default:
			add(k, "approvals: unknown key %q (want %s)", k.Value, approvalKeys)
		}
	}
	return ap, errs
}

// parseNotify reads `notify: [{webhook: {url, format, headers}}, ...]`.
func parseNotify(file string, v *yaml.Node) ([]notify.Target, ErrorList) {
	var errs ErrorList
	add := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, Error{File: file, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
	}
	if v.Kind != yaml.SequenceNode {
		add(v, "approvals.notify: expected a list of {webhook: {%s}}", webhookKeys)
		return nil, errs
	}
	var out []notify.Target
	for i, item := range v.Content {
		where := fmt.Sprintf("approvals.notify[%d]", i)
		if item.Kind != yaml.MappingNode || len(item.Content) == 0 {
			add(item, "%s: expected {webhook: {%s}}", where, webhookKeys)
			continue
		}
		for j := 0; j+1 < len(item.Content); j += 2 {
			k, n := item.Content[j], item.Content[j+1]
			if k.Value != "webhook" {
				add(k, "%s: unknown key %q (want webhook)", where, k.Value)
				continue
			}
			if t, ok := parseNotifyWebhook(where+".webhook", n, add); ok {
				out = append(out, t)
			}
		}
	}
	return out, errs
}

// parseNotifyWebhook reads one `webhook: {url, format, headers}`.
func parseNotifyWebhook(where string, v *yaml.Node, add func(*yaml.Node, string, ...any)) (notify.Target, bool) {
	var t notify.Target
	if v.Kind != yaml.MappingNode {
		add(v, "%s: expected {%s}", where, webhookKeys)
		return t, false
	}
	ok := true
	bad := func(n *yaml.Node, format string, args ...any) {
		add(n, format, args...)
		ok = false
	}
	var urlNode *yaml.Node
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, n := v.Content[i], v.Content[i+1]
		switch k.Value {
		case "url":
			urlNode = n
			if n.Kind != yaml.ScalarNode || n.Value == "" {
				bad(n, "%s.url: expected an http(s) URL", where)
				continue
			}
			u, err := hooks.ExpandEnv(n.Value)
			if err != nil {
				bad(n, "%s.url: %v", where, err)
				continue
			}
			if pu, perr := url.Parse(u); perr != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
				bad(n, "%s.url: expected an http(s) URL, got %q", where, n.Value)
				continue
			}
			t.URL = u
		case "format":
			if n.Kind != yaml.ScalarNode || (n.Value != notify.FormatJSON && n.Value != notify.FormatSlack) {
				bad(n, "%s.format: expected json or slack, got %q", where, n.Value)
				continue
			}
			t.Format = n.Value
		case "headers":
			if n.Kind != yaml.MappingNode {
				bad(n, "%s.headers: expected a mapping of header names to values", where)
				continue
			}
			t.Headers = map[string]string{}
			for j := 0; j+1 < len(n.Content); j += 2 {
				hk, hv := n.Content[j], n.Content[j+1]
				if hv.Kind != yaml.ScalarNode {
					bad(hv, "%s.headers.%s: expected a string", where, hk.Value)
					continue
				}
				x, err := hooks.ExpandEnv(hv.Value)
				if err != nil {
					bad(hv, "%s.headers.%s: %v", where, hk.Value, err)
					continue
				}
				t.Headers[hk.Value] = x
			}
		default:
			bad(k, "%s: unknown key %q (want %s)", where, k.Value, webhookKeys)
		}
	}
	if urlNode == nil {
		bad(v, "%s: missing url", where)
	}
	if !ok {
		return t, false
	}
	if err := t.Validate(); err != nil { // header names and values
		add(v, "%s: %v", where, err)
		return t, false
	}
	if t.Format == "" {
		t.Format = notify.FormatJSON
	}
	return t, true
}

// fmtDur prints a bound as it would be written: 15m rather than 15m0s.
func fmtDur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// boundedDuration reads a duration (ParseAge: 90s, 15m, 2h, 1d) in
// [lo, hi] at key where; msg is the error, "" when it is valid.
func boundedDuration(n *yaml.Node, where string, lo, hi time.Duration, example string) (d time.Duration, msg string) {
	if n.Kind != yaml.ScalarNode {
		return 0, fmt.Sprintf("%s: expected a duration such as %s", where, example)
	}
	d, err := ParseAge(n.Value)
	switch {
	case err != nil:
		return 0, fmt.Sprintf("%s: expected a duration such as %s, got %q", where, example, n.Value)
	case d < lo:
		return 0, fmt.Sprintf("%s: %s is less than the minimum of %s", where, n.Value, fmtDur(lo))
	case d > hi:
		return 0, fmt.Sprintf("%s: %s is more than the maximum of %s", where, n.Value, fmtDur(hi))
	}
	return d, ""
}
