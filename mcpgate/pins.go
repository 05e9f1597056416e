package mcpgate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"sort"
	"sync"
	"time"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/agbom"
	"github.com/wardenhq/warden/internal/canon"
)

// Pins pins the tools of every MCP server the gateway relays (docs/agbom.md,
// "Tool pinning"). The first tools/list answer of a server that is let
// through pins each tool it lists: its name, description and input schema,
// with the SHA-256 of their RFC 8785 (JCS) form. Every later tools/list
// answer is compared with the pins before it is decided: each tool whose
// description or schema changed (ToolChanged), each tool the pins do not
// hold (ToolAdded) and, when the answer is the whole list (no cursor asked,
// no nextCursor given), each pinned tool it does not list (ToolRemoved)
// goes into the event's Envelope.ToolChanges, which policies read as
// mcp.tool_changes (the built-in ask-mcp-tool-change asks about changed and
// added tools). When the answer is let through — allowed, or asked and
// approved — its definitions become the pins; when it is refused the pins
// stay. A tool a list leaves out keeps its pin: servers list different
// tools to clients with different capabilities (server-everything adds its
// sampling and elicitation tools only for clients that can answer them),
// so a tool that comes back unchanged is no change. Either way the AgBOM
// of the caller (the principal's name, "default" without auth) gets the
// server and the tools it listed, with their pin state; tools it left out
// leave that AgBOM.
//
// Pins live in the store (agbom.Store), so they survive restarts and
// are shared by every gateway on the store. A store that cannot be read
// makes every listed tool a change (fail closed: the policy asks).
type Pins struct {
	Store agbom.Store
	// Timeout bounds each store call (default 2s).
	Timeout time.Duration
	// Logf reports store failures (never tool contents). Nil: silent.
	Logf func(format string, args ...any)
	// Now is the clock (default time.Now).
	Now func() time.Time

	mu   sync.Mutex        // one compare-then-pin at a time per process
	seen map[string]string // last AgBOM observation written, by tenant/agent/server (bounded: maxSeen)
}

// maxSeen bounds Pins.seen; past it the memory starts over (an unchanged
// observation is then written once more).
const maxSeen = 4096

// listing marks a forwarded tools/list request whose answer is compared
// with the pins; partial when it asked for a page after the first.
type listing struct{ partial bool }

// listingOf is the listing of a tools/list request; nil for anything else.
func listingOf(msg *message) *listing {
	if !msg.isRequest() || msg.method() != "tools/list" {
		return nil
	}
	params, _ := msg.m["params"].(map[string]any)
	cursor, _ := params["cursor"].(string)
	return &listing{partial: cursor != ""}
}

// listCheck is what one tools/list answer was found to list.
type listCheck struct {
	server  string
	defs    []warden.ToolDef
	full    bool
	pinned  map[string]agbom.ToolPin
	changes []warden.ToolChange
}

// maxListedTools bounds the tools of one answer that are compared and
// pinned (the store keeps at most agbom.MaxToolPins per server); the tools
// past it are changes every time (fail closed), at most maxUnpinnable of
// them recorded, as are at most maxUnpinnable doubly listed names.
const (
	maxListedTools = agbom.MaxToolPins
	maxUnpinnable  = 100
)

// HashTool returns the definition of one tool of a tools/list answer: its
// name, description and inputSchema, and the lowercase hex SHA-256 of the
// JCS form of {"name", "description", "inputSchema"} (absent members left
// out). An error for a tool without a string name.
func HashTool(t map[string]any) (warden.ToolDef, error) {
	name, _ := t["name"].(string)
	if name == "" {
		return warden.ToolDef{}, fmt.Errorf("a tool without a name")
	}
	obj := map[string]any{"name": name}
	d := warden.ToolDef{Name: name}
	if v, ok := t["description"]; ok {
		obj["description"] = v
		d.Description, _ = v.(string)
	}
	if v, ok := t["inputSchema"]; ok {
		obj["inputSchema"] = v
		b, err := canon.Marshal(v)
		if err != nil {
			return warden.ToolDef{}, fmt.Errorf("tool %q: inputSchema: %v", name, err)
		}
		d.InputSchema = b
	}
	b, err := canon.Marshal(obj)
	if err != nil {
		return warden.ToolDef{}, fmt.Errorf("tool %q: %v", name, err)
	}
	sum := sha256.Sum256(b)
	d.Hash = hex.EncodeToString(sum[:])
	return d, nil
}

// check reads a tools/list answer and compares it with the server's pins;
// nil when msg is not a tools/list result or p is nil.
//
// A result with a tools array whose request the gateway cannot name (a
// response on a resumed SSE stream, a request the bounded correlation
// cache forgot) is compared as a page: changed and added tools count,
// nothing is removed.
func (p *Pins) check(ctx context.Context, server string, msg *message, l *listing) *listCheck {
	if p == nil || msg.isRequest() || msg.isNotification() {
		return nil
	}
	res, ok := msg.m["result"].(map[string]any)
	if !ok {
		return nil
	}
	tools, isList := res["tools"].([]any)
	if l == nil {
		if !isList {
			return nil
		}
		l = &listing{partial: true}
	}
	next, _ := res["nextCursor"].(string)
	lc := &listCheck{server: server, full: !l.partial && next == "", pinned: map[string]agbom.ToolPin{}}
	seen := map[string]bool{}
	first := map[string]warden.ToolDef{}
	var dups []warden.ToolDef // a name listed again with another definition
	var over []warden.ToolDef // tools past maxListedTools: never pinned
	for _, x := range tools {
		t, _ := x.(map[string]any)
		d, err := HashTool(t)
		if err != nil {
			continue // a tool without a name cannot be called
		}
		if seen[d.Name] {
			if first[d.Name].Hash != d.Hash && len(dups) < maxUnpinnable {
				dups = append(dups, d)
			}
			continue
		}
		seen[d.Name] = true
		first[d.Name] = d
		if len(lc.defs) >= maxListedTools {
			if len(over) < maxUnpinnable {
				over = append(over, d)
			}
			continue
		}
		lc.defs = append(lc.defs, d)
	}
	sort.Slice(lc.defs, func(i, j int) bool { return lc.defs[i].Name < lc.defs[j].Name })
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.timeout())
	pins, err := p.Store.ToolPins(sctx, server)
	cancel()
	if err != nil {
		p.logf("mcp %s: reading the tool pins: %v; every listed tool counts as changed", server, err)
		for i := range lc.defs {
			d := lc.defs[i]
			lc.changes = append(lc.changes, warden.ToolChange{Change: warden.ToolAdded, Server: server, Name: d.Name, New: &d})
		}
		lc.pinned = nil // unknown: nothing is removed, nothing pinned from here
		return lc
	}
	for _, pn := range pins {
		lc.pinned[pn.Name] = pn
	}
	// Tools past the bound cannot be pinned: each is a change, every time.
	for i := range over {
		d := over[i]
		lc.changes = append(lc.changes, warden.ToolChange{Change: warden.ToolAdded, Server: server, Name: d.Name, New: &d})
	}
	// A name listed twice with two definitions: a client may use either,
	// so the second is a change whatever the pins say (never pinned).
	for i := range dups {
		d := dups[i]
		old := first[d.Name]
		if pn, ok := lc.pinned[d.Name]; ok {
			old = *pinDef(pn)
		}
		lc.changes = append(lc.changes, warden.ToolChange{Change: warden.ToolChanged, Server: server, Name: d.Name, Old: &old, New: &d})
	}
	if len(pins) == 0 {
		return lc // the first list of the server: pinned when let through
	}
	for i := range lc.defs {
		d := lc.defs[i]
		pn, ok := lc.pinned[d.Name]
		switch {
		case !ok:
			lc.changes = append(lc.changes, warden.ToolChange{Change: warden.ToolAdded, Server: server, Name: d.Name, New: &d})
		case pn.Hash != d.Hash:
			lc.changes = append(lc.changes, warden.ToolChange{Change: warden.ToolChanged, Server: server, Name: d.Name, Old: pinDef(pn), New: &d})
		}
	}
	if lc.full {
		for _, pn := range pins {
			if !seen[pn.Name] {
				lc.changes = append(lc.changes, warden.ToolChange{Change: warden.ToolRemoved, Server: server, Name: pn.Name, Old: pinDef(pn)})
			}
		}
	}
	return lc
}

func pinDef(p agbom.ToolPin) *warden.ToolDef {
	return &warden.ToolDef{Name: p.Name, Description: p.Description, InputSchema: p.InputSchema, Hash: p.Hash}
}

// settled pins the answer's definitions when it was let through, and
// records the server and its tools in the caller's AgBOM.
func (p *Pins) settled(ctx context.Context, lc *listCheck, endpoint string, letThrough bool) {
	if p == nil || lc == nil {
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.timeout())
	defer cancel()
	p.mu.Lock()
	defer p.mu.Unlock()
	hashes := map[string]string{}
	for n, pn := range lc.pinned {
		hashes[n] = pn.Hash
	}
	var removed []string
	if letThrough && lc.pinned != nil {
		now := p.now()
		var put []agbom.ToolPin
		for _, d := range lc.defs {
			if old, ok := lc.pinned[d.Name]; !ok || old.Hash != d.Hash {
				put = append(put, agbom.ToolPin{Server: lc.server, Name: d.Name, Description: d.Description,
					InputSchema: d.InputSchema, Hash: d.Hash, Pinned: now})
			}
			hashes[d.Name] = d.Hash
		}
		if len(put) > 0 {
			if err := p.Store.PinTools(sctx, lc.server, put, nil); err != nil {
				p.logf("mcp %s: pinning %d tool(s): %v", lc.server, len(put), err)
				return
			}
		}
	}
	for _, c := range lc.changes {
		if c.Change == warden.ToolRemoved {
			removed = append(removed, c.Name)
		}
	}
	u := agbom.MCPObservation(lc.server, endpoint, lc.defs, hashes, removed)
	pr := warden.PrincipalFrom(ctx)
	u.Tenant, u.Agent, u.At = pr.Tenant, pr.Name, p.now()
	if u.Agent == "" {
		u.Agent = agbom.DefaultAgent
	}
	// The same observation as the last one written for this caller and
	// server changes nothing: skip the store write (a SQLite transaction).
	key, sum := u.Tenant+"\x00"+u.Agent+"\x00"+lc.server, observationSum(u)
	if p.seen[key] == sum {
		return
	}
	if err := p.Store.UpdateAgBOM(sctx, u); err != nil {
		p.logf("mcp %s: recording the tools in the AgBOM of %q: %v", lc.server, u.Agent, err)
		return
	}
	if p.seen == nil || len(p.seen) >= maxSeen {
		p.seen = map[string]string{}
	}
	p.seen[key] = sum
}

// observationSum identifies an AgBOM update by what it writes (not its
// time).
func observationSum(u *agbom.Update) string {
	h := sha256.New()
	for _, c := range u.Put {
		h.Write([]byte(c.ID))
		h.Write([]byte{0})
		h.Write(c.Doc)
		h.Write([]byte{0})
	}
	h.Write([]byte{1})
	for _, id := range u.Remove {
		h.Write([]byte(id))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (p *Pins) timeout() time.Duration {
	if p.Timeout > 0 {
		return p.Timeout
	}
	return 2 * time.Second
}

func (p *Pins) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Pins) logf(format string, args ...any) {
	if p.Logf != nil {
		p.Logf(format, args...)
	}
}

// toolChanges is lc's changes (nil when none).
func (lc *listCheck) toolChanges() []warden.ToolChange {
	if lc == nil {
		return nil
	}
	return lc.changes
}

// publicURL is u without its user info, query and fragment (they may hold
// credentials), for the AgBOM; "" when it does not parse.
func publicURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	p.User, p.RawQuery, p.ForceQuery, p.Fragment, p.RawFragment = nil, "", false, "", ""
	return p.String()
}
