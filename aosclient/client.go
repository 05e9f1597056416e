// Package aosclient is the aos hook handler kind (docs/hooks.md): a client for
// a remote AOS Guardian, spoken to in JSON-RPC 2.0 over HTTP (as /aos is),
// so that a third-party Guardian composes with warden's own in one chain.
//
// AOS events (those whose name is an AOS method, or that arrived on the aos
// surface) are sent as the AOS request they are: steps/* with their params
// (a minimal context is added when the payload has none), protocols/MCP and
// protocols/A2A with the protocol message wrapped as params.message, the A2A
// hook methods with it wrapped as params.payload. Hook events that have an
// AOS counterpart are translated (see route.go for the table); every other
// event — and ping — abstains without any HTTP call.
//
// The transport is the webhook kind's: a timeout over the whole exchange, a
// size cap on the answer, non-2xx and garbage answers as errors, header
// values never printed.
package aosclient

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/jsonrpc"
	"github.com/wardenhq/warden/webhook"
)

// Defaults for the zero values of Config.
const (
	DefaultTimeout     = 5 * time.Second
	DefaultMaxResponse = 4 << 20 // 4 MiB, the AOS endpoint's own request limit
)

// Config declares one remote AOS Guardian.
type Config struct {
	// URL is the Guardian's JSON-RPC endpoint, e.g. http://127.0.0.1:9000/aos.
	URL string
	// Headers are sent with every request (already ${VAR}-expanded); their
	// values are never printed.
	Headers map[string]string
	// Timeout bounds one whole exchange; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxResponse bounds the answer in bytes; 0 means DefaultMaxResponse.
	MaxResponse int64
}

// String describes c with header values masked and the URL stripped of
// credentials and query.
func (c Config) String() string { return "aos" + c.transport().String()[len("webhook"):] }

// GoString masks header values for %#v as String does for %v.
func (c Config) GoString() string { return c.String() }

func (c Config) transport() webhook.Config {
	max := c.MaxResponse
	if max == 0 {
		max = DefaultMaxResponse
	}
	return webhook.Config{URL: c.URL, Headers: c.Headers, Timeout: c.Timeout, MaxResponse: max,
		Label: "remote guardian"}
}

// Client decides events by asking a remote AOS Guardian. It is safe for
// concurrent use.
type Client struct {
	post *webhook.Handler
}

var _ warden.Handler = (*Client)(nil)

// New validates c (as webhook.New does) and returns its client. With client
// nil it uses webhook.SharedClient.
func New(c Config, client *http.Client) (*Client, error) {
	h, err := webhook.New(c.transport(), client)
	if err != nil {
		return nil, fmt.Errorf("aos: %w", err)
	}
	return &Client{post: h}, nil
}

// String describes the client without secrets.
func (c *Client) String() string { return c.post.String() }

// Decide asks the remote Guardian about ev. Events without an AOS
// counterpart yield the zero Decision (Abstain) and no call. An error means
// no decision could be had (transport, a JSON-RPC error object, an answer
// that is not a response to this request, an unknown decision, or a modify
// that cannot be mapped back onto ev's payload); the chain's failure policy
// decides what it means.
func (c *Client) Decide(ctx context.Context, ev *warden.Event) (warden.Decision, error) {
	r := routeOf(ev)
	if r == nil {
		return warden.Decision{}, nil
	}
	id := newID()
	params, err := r.params(ev, id)
	if err != nil {
		return warden.Decision{}, fmt.Errorf("aos %s: %w", ev.Name, err)
	}
	body, err := json.Marshal(jsonrpc.Request{JSONRPC: jsonrpc.Version, ID: id, Method: r.method, Params: params})
	if err != nil {
		return warden.Decision{}, fmt.Errorf("aos %s: encoding the request: %w", ev.Name, err)
	}
	answer, err := c.post.Post(ctx, body)
	if err != nil {
		return warden.Decision{}, err
	}
	res, err := parseResponse(answer, id)
	if err != nil {
		return warden.Decision{}, fmt.Errorf("%s: %w", c.post, err)
	}
	return r.decision(ev, res)
}

// newID returns a fresh random (version 4) UUID.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
