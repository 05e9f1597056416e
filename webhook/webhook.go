// Package webhook is the webhook hook handler kind (docs/hooks.md): it POSTs an
// event's payload as JSON to a URL and reads the patch from the response.
//
// Every call is bounded: a timeout covers the whole exchange (connect, send,
// headers and body, however slowly the server trickles bytes), and the
// response body is read through a limited reader, so a huge body is refused
// without being buffered. Header values (tokens) and payloads never appear in
// errors or in String output; URLs appear without credentials or query.
//
// The same transport serves the aosclient handler kind through Handler.Post.
package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// Defaults for the zero values of Config.
const (
	DefaultTimeout     = 5 * time.Second
	DefaultMaxResponse = 1 << 20 // 1 MiB
)

// excerptLen is how much of a failed response's body an error quotes.
const excerptLen = 200

// Config declares one webhook.
type Config struct {
	URL string
	// Headers are sent with every request. They are already ${VAR}-expanded
	// by the config loader and often hold tokens: their values are never
	// printed.
	Headers map[string]string
	// Timeout bounds one whole exchange; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxResponse bounds the response body in bytes; 0 means
	// DefaultMaxResponse.
	MaxResponse int64
	// Label names the handler kind in errors ("webhook returned HTTP 500");
	// empty means "webhook". The aosclient kind sets "remote guardian".
	Label string
}

// String describes c with header values masked and the URL stripped of
// credentials and query, so a Config can be logged.
func (c Config) String() string {
	var b strings.Builder
	b.WriteString("webhook{url=")
	if u, err := url.Parse(c.URL); err == nil {
		b.WriteString(safeURL(u))
	} else {
		b.WriteString("<invalid>")
	}
	if len(c.Headers) > 0 {
		names := make([]string, 0, len(c.Headers))
		for k := range c.Headers {
			names = append(names, k)
		}
		sort.Strings(names)
		b.WriteString(" headers=[")
		for i, k := range names {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(k)
			b.WriteString("=***")
		}
		b.WriteByte(']')
	}
	if c.Timeout != 0 {
		fmt.Fprintf(&b, " timeout=%s", c.Timeout)
	}
	if c.MaxResponse != 0 {
		fmt.Fprintf(&b, " max_response=%d", c.MaxResponse)
	}
	b.WriteByte('}')
	return b.String()
}

// GoString masks header values for %#v as String does for %v.
func (c Config) GoString() string { return c.String() }

// Handler posts payloads to one URL. It is safe for concurrent use.
type Handler struct {
	label   string
	url     string // as given, used for requests
	safe    string // for errors
	host    string // a Host header override, if any
	headers http.Header
	timeout time.Duration
	max     int64
	client  *http.Client
}

// New validates c and returns its handler. The URL must be absolute http or
// https with a host; header names must be valid tokens and values must not
// hold control characters. With client nil the handler uses a shared pooled
// client (SharedClient).
func New(c Config, client *http.Client) (*Handler, error) {
	if strings.TrimSpace(c.URL) == "" {
		return nil, errors.New("webhook: url is empty")
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		// url.Parse's error quotes the whole URL, which may hold a token.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("webhook: url does not parse: %v", err)
	}
	safe := safeURL(u)
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("webhook: url %s: scheme %q not supported (want http or https)", safe, u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("webhook: url %s has no host", safe)
	}
	if c.Timeout < 0 {
		return nil, fmt.Errorf("webhook: timeout %s is negative", c.Timeout)
	}
	if c.MaxResponse < 0 {
		return nil, fmt.Errorf("webhook: max response %d is negative", c.MaxResponse)
	}
	h := &Handler{url: u.String(), safe: safe, headers: make(http.Header, len(c.Headers)+1),
		timeout: c.Timeout, max: c.MaxResponse, client: client, label: c.Label}
	if h.label == "" {
		h.label = "webhook"
	}
	if h.timeout == 0 {
		h.timeout = DefaultTimeout
	}
	if h.max == 0 {
		h.max = DefaultMaxResponse
	}
	if h.client == nil {
		h.client = SharedClient()
	}
	for k, v := range c.Headers {
		if !validHeaderName(k) {
			return nil, fmt.Errorf("webhook %s: header name %q is not a valid HTTP token", safe, k)
		}
		if !validHeaderValue(v) {
			return nil, fmt.Errorf("webhook %s: header %s has a value with control characters", safe, k)
		}
		if http.CanonicalHeaderKey(k) == "Host" {
			h.host = v
			continue
		}
		h.headers.Set(k, v)
	}
	h.headers.Set("Content-Type", "application/json")
	if h.headers.Get("Accept") == "" {
		h.headers.Set("Accept", "application/json")
	}
	return h, nil
}

// String describes the handler without secrets.
func (h *Handler) String() string { return h.label + " " + h.safe }

// Run POSTs payload and returns the patch the server answered with:
//   - a 2xx answer whose body is empty (or HTTP 204) or the empty object {}
//     is the empty patch: nil, nil;
//   - a body of null is returned as null (Standard Agents' "unchanged"),
//     left to the caller to interpret;
//   - any other JSON value (an object patch, a message list, a tool result)
//     is returned as sent, without surrounding whitespace;
//   - a body that is not JSON, larger than MaxResponse, a non-2xx status or
//     no complete answer within Timeout is an error.
func (h *Handler) Run(ctx context.Context, payload []byte) (patch []byte, err error) {
	body, err := h.Post(ctx, payload)
	if err != nil {
		return nil, err
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, nil
	}
	if !json.Valid(body) {
		return nil, fmt.Errorf("%s %s: response is not JSON: %s", h.label, h.safe, Excerpt(body))
	}
	if isEmptyObject(body) {
		return nil, nil
	}
	return body, nil
}

// isEmptyObject reports whether the valid JSON text b is {} (with any
// inner whitespace).
func isEmptyObject(b []byte) bool {
	return len(b) >= 2 && b[0] == '{' && len(bytes.TrimSpace(b[1:len(b)-1])) == 0
}
