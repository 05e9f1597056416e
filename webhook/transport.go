package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/wardenhq/warden/internal/traceparent"
)

// SharedClient returns the pooled client handlers use when given none:
// keep-alive connections (16 idle per host), bounded dial, TLS handshake and
// response-header sizes, and no redirects (a 3xx is an error: a redirect
// must not carry the headers' tokens elsewhere). Per-call deadlines come
// from the handler's timeout.
var SharedClient = sync.OnceValue(func() *http.Client {
	tr := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   5 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           128,
		MaxIdleConnsPerHost:    16,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    5 * time.Second,
		ExpectContinueTimeout:  1 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
})

// Post sends body as a JSON POST and returns the body of a 2xx answer. The
// whole exchange is bounded by the handler's timeout (an error wrapping
// context.DeadlineExceeded when it passes, however slowly the server
// answers) and the body by its MaxResponse (read through a limited reader:
// a larger body is an error and is never buffered whole). A non-2xx status
// is an error quoting a short excerpt of the body.
func (h *Handler) Post(ctx context.Context, body []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v", h.label, h.safe, unwrapURL(err))
	}
	req.Header = h.headers.Clone()
	if h.host != "" {
		req.Host = h.host
	}
	traceparent.Inject(ctx, req.Header) // the decision's trace (otel:)
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, h.transportErr(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		ex, _ := io.ReadAll(io.LimitReader(resp.Body, 4*excerptLen))
		msg := fmt.Sprintf("%s returned HTTP %d from %s", h.label, resp.StatusCode, h.safe)
		if e := Excerpt(ex); e != "" {
			msg += ": " + e
		}
		return nil, errors.New(msg)
	}
	if resp.ContentLength > h.max {
		return nil, h.tooLarge()
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, h.max+1))
	if err != nil {
		return nil, h.transportErr(ctx, err)
	}
	if int64(len(b)) > h.max {
		return nil, h.tooLarge()
	}
	return b, nil
}

func (h *Handler) tooLarge() error {
	return fmt.Errorf("%s %s: response body larger than %d bytes", h.label, h.safe, h.max)
}

// transportErr names what went wrong without the URL's secrets: a deadline
// or cancellation wraps the context's error, anything else the transport's.
func (h *Handler) transportErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		if errors.Is(cerr, context.DeadlineExceeded) {
			return fmt.Errorf("%s %s: no complete answer within %s: %w", h.label, h.safe, h.timeout, cerr)
		}
		return fmt.Errorf("%s %s: %w", h.label, h.safe, cerr)
	}
	return fmt.Errorf("%s %s: %w", h.label, h.safe, unwrapURL(err))
}

// unwrapURL drops a *url.Error's text, which quotes the whole URL (query
// tokens and userinfo included), keeping the underlying error.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// safeURL is u for errors and logs: scheme, host and path, without
// userinfo, and with any query or fragment elided.
func safeURL(u *url.URL) string {
	s := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}).String()
	if u.RawQuery != "" || u.ForceQuery {
		s += "?…"
	}
	return s
}

// Excerpt returns the start of b as a one-line printable string of at most
// 200 runes ("…" marks a cut), for error messages about a remote answer.
func Excerpt(b []byte) string {
	var sb strings.Builder
	n := 0
	for len(b) > 0 {
		if n == excerptLen {
			sb.WriteString("…")
			break
		}
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		if r == utf8.RuneError && size == 1 || !unicode.IsPrint(r) {
			r = ' '
		}
		sb.WriteRune(r)
		n++
	}
	return strings.TrimSpace(sb.String())
}

// validHeaderName reports whether k is an HTTP token (RFC 9110 §5.6.2).
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validHeaderValue reports whether v holds no control characters but tab.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
