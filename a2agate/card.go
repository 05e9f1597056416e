package a2agate

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/wardenhq/warden/internal/noredirect"
	"github.com/wardenhq/warden/relay"
)

// cardPaths are where an agent publishes its card: A2A 0.3+/1.0, then the
// older name.
var cardPaths = []string{"/.well-known/agent-card.json", "/.well-known/agent.json"}

// serveCard serves the upstream's agent card, rewritten to point at the proxy.
func (g *Gate) serveCard(w http.ResponseWriter, r *http.Request, ag *agent) {
	c := relay.Start(r.Context(), g.opts.Timeout)
	defer c.Done()
	card, err := g.fetchCard(c, ag)
	if err != nil {
		g.opts.Logf("a2a %s: agent card: %v%s", ag.name, err, noredirect.Target(err))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadGateway)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "agent card of " + ag.name + ": " + err.Error()})
		return
	}
	g.observeCard(r.Context(), ag, card)
	rewriteCard(card, g.selfURL(r, ag))
	b, err := json.Marshal(card)
	if err != nil {
		http.Error(w, "encoding the agent card", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

// cardURLs are the places tried for ag's card: under the upstream URL, then,
// when it has a path (an endpoint such as /a2a/jsonrpc), under its origin.
func cardURLs(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	u.RawQuery, u.Fragment = "", ""
	base := strings.TrimRight(u.String(), "/")
	var out []string
	for _, p := range cardPaths {
		out = append(out, base+p)
	}
	if strings.Trim(u.Path, "/") != "" {
		u.Path, u.RawPath = "", ""
		origin := strings.TrimRight(u.String(), "/")
		for _, p := range cardPaths {
			out = append(out, origin+p)
		}
	}
	return out
}

var errNoCard = errors.New("not found")

// fetchCard gets the first card found; a network failure stops the search
// (the agent is down: no point in trying its other paths).
func (g *Gate) fetchCard(c *relay.Call, ag *agent) (map[string]any, error) {
	for _, u := range cardURLs(ag.url) {
		card, err := g.getCard(c, ag, u)
		if errors.Is(err, errNoCard) {
			continue
		}
		return card, err
	}
	return nil, fmt.Errorf("the upstream publishes no agent card at %s/.well-known/", ag.public)
}

// getCard fetches the card at u: the configured headers, no client's (a
// card is fetched for any caller), no trace context.
func (g *Gate) getCard(c *relay.Call, ag *agent, u string) (map[string]any, error) {
	req, err := c.Request(relay.Request{Method: http.MethodGet, URL: u, Own: func(h http.Header) {
		h.Set("Accept", "application/json")
		h.Set("User-Agent", "warden-a2a")
	}, Set: ag.headers})
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(g.client, req)
	if err != nil {
		if c.Context().Err() != nil {
			return nil, fmt.Errorf("upstream did not answer within %s", g.opts.Timeout)
		}
		var re *noredirect.Error
		if errors.As(err, &re) {
			return nil, fmt.Errorf("upstream %w", re)
		}
		var e *relay.Error
		if errors.As(err, &e) {
			err = e.Err // without the URL, which may hold a token
		}
		return nil, fmt.Errorf("upstream unreachable: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
		return nil, errNoCard
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("upstream answered HTTP %d", resp.StatusCode)
	}
	data, err := relay.ReadAll(resp.Body, g.opts.MaxBody)
	var tooLarge *relay.TooLargeError
	switch {
	case errors.As(err, &tooLarge):
		return nil, fmt.Errorf("card over the limit (%d bytes)", g.opts.MaxBody)
	case err != nil:
		return nil, fmt.Errorf("reading the card: %v", err)
	}
	var card map[string]any
	if err := json.Unmarshal(data, &card); err != nil || card == nil {
		return nil, errors.New("the card is not a JSON object")
	}
	return card, nil
}

// isJSONRPC reports whether a transport / protocol binding name is the
// JSON-RPC binding, the only one warden governs.
func isJSONRPC(s string) bool {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "JSONRPC", "JSON-RPC", "JSON_RPC":
		return true
	}
	return false
}

// rewriteCard points card at the proxy (self) so that clients talk to the
// agent through warden, never around it:
//
//   - A2A 0.3: "url" becomes self and "preferredTransport" JSONRPC;
//     "additionalInterfaces" keeps only its JSONRPC entries, their "url" self.
//   - A2A 1.0: "supportedInterfaces" keeps only its JSONRPC entries, their
//     "url" self (protocolVersion and tenant kept).
//   - Interfaces of other bindings (gRPC, HTTP+JSON) are removed: warden
//     does not proxy them, and leaving them would point clients at the
//     upstream, past the guardian.
//   - "signatures" are removed: they sign the upstream's URLs, which the
//     card no longer holds, and would fail verification anyway.
func rewriteCard(card map[string]any, self string) {
	if _, ok := card["url"]; ok {
		card["url"] = self
		if pt, ok := card["preferredTransport"].(string); ok && !isJSONRPC(pt) {
			card["preferredTransport"] = "JSONRPC"
		}
	}
	if ifs, ok := card["additionalInterfaces"].([]any); ok {
		card["additionalInterfaces"] = keepJSONRPC(ifs, "transport", self)
	}
	if ifs, ok := card["supportedInterfaces"].([]any); ok {
		card["supportedInterfaces"] = keepJSONRPC(ifs, "protocolBinding", self)
	}
	delete(card, "signatures")
}

func keepJSONRPC(ifs []any, key, self string) []any {
	kept := []any{}
	for _, v := range ifs {
		i, ok := v.(map[string]any)
		if !ok || !isJSONRPC(getStr(i, key)) {
			continue
		}
		i["url"] = self
		kept = append(kept, i)
	}
	return kept
}
