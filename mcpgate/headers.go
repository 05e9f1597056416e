package mcpgate

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/wardenhq/warden/jsonrpc"
)

// MCP 2026-07-28 standard request headers (the spec's Streamable HTTP,
// "Request Metadata"; SEP-2243). From that version on, every POST carries
// Mcp-Method (the body's method), Mcp-Name on tools/call, prompts/get and
// resources/read (params.name or params.uri), and an Mcp-Param-{Name} per
// tool argument whose inputSchema property is annotated x-mcp-header:
// {Name}. A server compares them with the body and answers HTTP 400 with
// -32020 (HeaderMismatch) when they disagree.
//
// The gateway checks the client's copies against the body the client sent
// (refusing a disagreement before anything is decided or forwarded, as the
// spec asks of whatever processes the body), and never forwards them: the
// headers the upstream gets are rebuilt from the body the gateway forwards
// — after a policy's modify — so an argument a policy redacted cannot
// leave in a header. Which arguments become headers is learned from the
// upstream's tools/list answers (paramCache), else from the tool pins.
// Versions before 2026-07-28 define none of these headers: nothing is
// checked, and none is forwarded.

// CodeHeaderMismatch is MCP's HeaderMismatch (-32020, 2026-07-28): the
// standard headers disagree with the body, or one required is missing or
// malformed. Answered with HTTP 400.
const CodeHeaderMismatch = -32020

const (
	hdrProtocolVersion = "Mcp-Protocol-Version"
	hdrMethod          = "Mcp-Method"
	hdrName            = "Mcp-Name"
	hdrParamPrefix     = "Mcp-Param-"
	// headersSince is the first protocol version with standard headers;
	// versions are compared as text, as the go-sdk does.
	headersSince = "2026-07-28"
	// metaProtocolVersion is the _meta key a 2026-07-28 request carries
	// its version in; the Mcp-Protocol-Version header must match it.
	metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	b64Prefix           = "=?base64?"
	b64Suffix           = "?="
	// maxSafeInt bounds the integers a header may carry (JavaScript's
	// safe range, ±(2^53-1)).
	maxSafeInt = 1<<53 - 1
)

// hasStandardHeaders reports whether protocol version v defines the
// standard request headers.
func hasStandardHeaders(v string) bool { return v != "" && v >= headersSince }

// paramBinding ties an argument, by its path of property names from the
// arguments object, to the header Mcp-Param-{header}.
type paramBinding struct {
	path   []string
	header string
}

// toolParams are the x-mcp-header bindings of one tool. invalid says why
// the tool's annotations break the spec's rules (a client must not list
// such a tool); its arguments then become no header. lenient marks a
// schema the go-sdk (v1.8.0) reads no annotation from at all — a "type"
// that is not a string (["string", "null"]) or a property that is not an
// object anywhere on the properties chain — so its clients send no
// Mcp-Param-*: a missing one is then not refused (one that disagrees
// still is), and the upstream still gets them rebuilt.
type toolParams struct {
	bindings []paramBinding
	invalid  string
	lenient  bool
}

// goSDKReads reports whether the go-sdk can read the properties chain of
// schema node n (see toolParams.lenient).
func goSDKReads(n any) bool {
	if n == nil {
		return true
	}
	obj, ok := n.(map[string]any)
	if !ok {
		return false
	}
	if t, ok := obj["type"]; ok && t != nil {
		if _, isStr := t.(string); !isStr {
			return false
		}
	}
	p, ok := obj["properties"]
	if !ok || p == nil {
		return true
	}
	props, ok := p.(map[string]any)
	if !ok {
		return false
	}
	for _, v := range props {
		if !goSDKReads(v) {
			return false
		}
	}
	return true
}

// paramsOf reads the x-mcp-header annotations of an inputSchema: on a
// property reached from the root through "properties" keys only, a
// non-empty HTTP token naming the header, on a property of type string,
// integer or boolean, unique without regard to case.
func paramsOf(schema any) toolParams {
	var tp toolParams
	seen := map[string]bool{}
	var walk func(node any, prefix []string)
	walk = func(node any, prefix []string) {
		obj, _ := node.(map[string]any)
		props, _ := obj["properties"].(map[string]any)
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		sort.Strings(names) // the same bindings, in the same order, every time
		for _, n := range names {
			if tp.invalid != "" {
				return
			}
			prop, _ := props[n].(map[string]any)
			path := append(append([]string(nil), prefix...), n)
			if v, ok := prop["x-mcp-header"]; ok {
				name, _ := v.(string)
				typ, _ := prop["type"].(string)
				where := strings.Join(path, ".")
				switch {
				case name == "":
					tp.invalid = fmt.Sprintf("property %q: x-mcp-header must be a non-empty string", where)
				case !isToken(name):
					tp.invalid = fmt.Sprintf("property %q: x-mcp-header %q is not an HTTP token", where, name)
				case typ != "string" && typ != "integer" && typ != "boolean":
					tp.invalid = fmt.Sprintf("property %q: x-mcp-header on a property of type %q (string, integer or boolean only)", where, typ)
				case seen[strings.ToLower(name)]:
					tp.invalid = fmt.Sprintf("property %q: x-mcp-header %q is used twice", where, name)
				default:
					seen[strings.ToLower(name)] = true
					tp.bindings = append(tp.bindings, paramBinding{path: path, header: name})
				}
				if tp.invalid != "" {
					return
				}
			}
			walk(prop, path)
		}
	}
	walk(schema, nil)
	if tp.invalid != "" {
		tp.bindings = nil
	}
	tp.lenient = len(tp.bindings) > 0 && !goSDKReads(schema)
	return tp
}

// isToken reports whether s is an RFC 9110 token (1*tchar).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// argument returns the value at path in a tools/call's arguments; ok is
// false when absent.
func argument(args map[string]any, path []string) (any, bool) {
	var cur any = args
	for _, p := range path {
		obj, isObj := cur.(map[string]any)
		if !isObj {
			return nil, false
		}
		v, ok := obj[p]
		if !ok {
			return nil, false
		}
		cur = v
	}
	return cur, true
}

// paramText is the text an argument becomes in a header, before encoding:
// a string as it is, a boolean as true or false, an integer in the safe
// range in decimal. ok is false for anything else (null, a fraction, an
// object, an array), which becomes no header.
func paramText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) || x > maxSafeInt || x < -maxSafeInt {
			return "", false
		}
		return strconv.FormatInt(int64(x), 10), true
	}
	return "", false
}

// encodeValue is a header value for s: s itself when it is plain visible
// ASCII (spaces inside), else =?base64?{base64 of its bytes}?=; a value
// shaped like that sentinel is encoded too, so it decodes to itself.
func encodeValue(s string) string {
	if !needsBase64(s) {
		return s
	}
	return b64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + b64Suffix
}

func needsBase64(s string) bool {
	if s == "" {
		return false
	}
	if first, last := s[0], s[len(s)-1]; first == ' ' || first == '\t' || last == ' ' || last == '\t' {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return true
		}
	}
	return strings.HasPrefix(s, b64Prefix) && strings.HasSuffix(s, b64Suffix)
}

// decodeValue reads a header value: the sentinel form decoded, anything
// else as it is. ok is false for a sentinel that is not valid base64.
func decodeValue(h string) (string, bool) {
	inner, ok := strings.CutPrefix(h, b64Prefix)
	if !ok {
		return h, true
	}
	inner, ok = strings.CutSuffix(inner, b64Suffix)
	if !ok {
		return h, true
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// plainHeaderValue reports whether h is made of visible ASCII, spaces and
// tabs only (what an encoded Mcp-Param value is made of).
func plainHeaderValue(h string) bool {
	for i := 0; i < len(h); i++ {
		if c := h[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return false
		}
	}
	return true
}

// hasCTL reports whether s has a control character (a header cannot
// carry one).
func hasCTL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// nameOf is the name a request addresses (Mcp-Name): params.name of
// tools/call and prompts/get, params.uri of resources/read. named is false
// for other methods; ok is false when the member is not a string.
func nameOf(m map[string]any) (name string, named, ok bool) {
	key := ""
	switch method, _ := m["method"].(string); method {
	case "tools/call", "prompts/get":
		key = "name"
	case "resources/read":
		key = "uri"
	default:
		return "", false, false
	}
	params, _ := m["params"].(map[string]any)
	name, ok = params[key].(string)
	return name, true, ok
}

// nameMember is the params member Mcp-Name mirrors for method.
func nameMember(method string) string {
	if method == "resources/read" {
		return "params.uri"
	}
	return "params.name"
}

// toolArgs is the arguments object of a tools/call (nil when none).
func toolArgs(m map[string]any) map[string]any {
	params, _ := m["params"].(map[string]any)
	args, _ := params["arguments"].(map[string]any)
	return args
}

// metaVersion is the protocol version in a message's params._meta ("" none).
func metaVersion(m map[string]any) string {
	params, _ := m["params"].(map[string]any)
	meta, _ := params["_meta"].(map[string]any)
	v, _ := meta[metaProtocolVersion].(string)
	return v
}

// isParamHeader reports whether header key k is an Mcp-Param-* header.
func isParamHeader(k string) bool {
	return len(k) > len(hdrParamPrefix) && strings.EqualFold(k[:len(hdrParamPrefix)], hdrParamPrefix)
}

// stripStandardHeaders removes every Mcp-Method, Mcp-Name and Mcp-Param-*
// from hdr.
func stripStandardHeaders(hdr http.Header) {
	for k := range hdr {
		if isParamHeader(k) || strings.EqualFold(k, hdrMethod) || strings.EqualFold(k, hdrName) {
			delete(hdr, k)
		}
	}
}

// errHeaders is the error of a request whose headers disagree with its
// body (answered HTTP 400, CodeHeaderMismatch). Its text names headers,
// never their values: a value may be a secret.
type errHeaders struct{ why string }

func (e *errHeaders) Error() string { return "header mismatch: " + e.why }

func mismatch(format string, args ...any) error {
	return &errHeaders{why: fmt.Sprintf(format, args...)}
}

// single returns the one value of header k, "" with present false when
// absent; an error when it is given more than once.
func single(hdr http.Header, k string) (v string, present bool, err error) {
	vs := hdr.Values(k)
	switch len(vs) {
	case 0:
		return "", false, nil
	case 1:
		return vs[0], true, nil
	}
	return "", false, mismatch("%s is given %d times", k, len(vs))
}

// checkHeaders compares the standard headers a client sent with the one
// message of its POST, m, as a 2026-07-28 server does: Mcp-Protocol-Version
// matches the body's _meta version; a request has Mcp-Method equal to its
// method (a notification, when it has one); Mcp-Name equals the name the
// request addresses (after decoding); and, when tp is known, each
// annotated argument present and not null has its Mcp-Param-* header, in
// valid encoding, equal to it (an integer compared as a number), and no
// header stands for an argument that is absent or null. It is called only
// when the client's Mcp-Protocol-Version is 2026-07-28 or later, or the
// body carries a _meta version.
func checkHeaders(hdr http.Header, m map[string]any, tp *toolParams) error {
	version, _, err := single(hdr, hdrProtocolVersion)
	if err != nil {
		return err
	}
	if mv := metaVersion(m); mv != "" && mv != version {
		if version == "" {
			return mismatch("%s is required for a body carrying _meta %q", hdrProtocolVersion, metaProtocolVersion)
		}
		return mismatch("%s does not match the body's _meta %q", hdrProtocolVersion, metaProtocolVersion)
	}
	if !hasStandardHeaders(version) {
		return nil
	}
	method, isCall := m["method"].(string)
	if !isCall {
		return nil // a response: no standard headers
	}
	hm, present, err := single(hdr, hdrMethod)
	switch {
	case err != nil:
		return err
	case !present && m["id"] != nil: // a notification's is not required
		return mismatch("missing required %s header", hdrMethod)
	case present && hm != method:
		return mismatch("%s does not match the body's method", hdrMethod)
	}
	name, named, nameOK := nameOf(m)
	if named {
		hn, present, err := single(hdr, hdrName)
		switch {
		case err != nil:
			return err
		case !present:
			return mismatch("missing required %s header for %s", hdrName, method)
		case !nameOK:
			return mismatch("%s given, but the body's %s has no name", hdrName, method)
		case hn != name: // the go-sdk sends a name as it is; the spec encodes some
			if d, ok := decodeValue(hn); !ok || d != name || d == hn {
				return mismatch("%s does not match the body's %s", hdrName, nameMember(method))
			}
		}
	}
	if method != "tools/call" || tp == nil {
		return nil
	}
	args := toolArgs(m)
	for _, b := range tp.bindings {
		k := hdrParamPrefix + b.header
		hv, present, err := single(hdr, k)
		if err != nil {
			return err
		}
		where := strings.Join(b.path, ".")
		v, ok := argument(args, b.path)
		if !ok || v == nil {
			if present {
				return mismatch("%s given for the absent or null argument %q", k, where)
			}
			continue
		}
		if !present {
			if tp.lenient {
				continue
			}
			return mismatch("missing %s header for the argument %q", k, where)
		}
		if !plainHeaderValue(hv) {
			return mismatch("%s carries characters that must be base64-encoded", k)
		}
		d, ok := decodeValue(hv)
		if !ok {
			return mismatch("%s is not valid base64", k)
		}
		want, ok := paramText(v)
		if !ok {
			return mismatch("%s given for the argument %q, which is not a string, integer or boolean", k, where)
		}
		if !paramEqual(d, v, want) {
			return mismatch("%s does not match the argument %q", k, where)
		}
	}
	return nil
}

// paramEqual compares a decoded header with an argument: an integer as a
// number (42.0 is 42), anything else as its text.
func paramEqual(decoded string, v any, text string) bool {
	if _, isNum := v.(float64); isNum {
		f, err := strconv.ParseFloat(decoded, 64)
		return err == nil && f == math.Trunc(f) && f <= maxSafeInt && f >= -maxSafeInt && strconv.FormatInt(int64(f), 10) == text
	}
	return decoded == text
}

// standardHeaders are the headers of one forwarded message m under
// 2026-07-28, rebuilt from m alone: Mcp-Method for a request or
// notification, Mcp-Name for one that addresses a name (as it is when it
// is plain ASCII; else in the form the client sent the same name in,
// clientName, or base64-encoded by the spec's rules), and for a tools/call an Mcp-Param-* for each argument tp
// binds that is present, not null, and a string, boolean or safe integer
// (as the go-sdk builds them). tp nil: no Mcp-Param-*.
func standardHeaders(m map[string]any, tp *toolParams, clientName string) http.Header {
	hdr := http.Header{}
	method, ok := m["method"].(string)
	if !ok {
		return hdr
	}
	hdr.Set(hdrMethod, method)
	if name, _, ok := nameOf(m); ok {
		v := encodeValue(name)
		if d, ok := decodeValue(clientName); v != name && clientName != "" && !hasCTL(clientName) && (clientName == name || ok && d == name) {
			// A name that needs encoding goes in the form the client chose
			// for it: the go-sdk sends it as it is (and compares it so),
			// the spec base64-encodes it.
			v = clientName
		}
		hdr.Set(hdrName, v)
	}
	if method != "tools/call" || tp == nil {
		return hdr
	}
	args := toolArgs(m)
	for _, b := range tp.bindings {
		v, ok := argument(args, b.path)
		if !ok || v == nil {
			continue
		}
		if s, ok := paramText(v); ok {
			hdr.Set(hdrParamPrefix+b.header, encodeValue(s))
		}
	}
	return hdr
}

// maxParamTools bounds the tools one upstream's paramCache remembers; past
// it the cache starts over.
const maxParamTools = 4096

// paramCache remembers the x-mcp-header bindings of an upstream's tools,
// by name, from the tools/list answers it sends (as the upstream sent
// them: it checks the headers against its own definitions). A tool listed
// again replaces its entry; one never listed is unknown.
type paramCache struct {
	mu    sync.Mutex
	tools map[string]toolParams
}

// learn reads a tools/list result (any result with a tools array).
func (c *paramCache) learn(msg *message) {
	res, ok := msg.m["result"].(map[string]any)
	if !ok {
		return
	}
	tools, ok := res["tools"].([]any)
	if !ok {
		return
	}
	for _, x := range tools {
		t, _ := x.(map[string]any)
		name, _ := t["name"].(string)
		if name != "" {
			c.put(name, paramsOf(t["inputSchema"]))
		}
	}
}

func (c *paramCache) put(name string, tp toolParams) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tools == nil || len(c.tools) >= maxParamTools {
		c.tools = map[string]toolParams{}
	}
	c.tools[name] = tp
}

func (c *paramCache) get(name string) (toolParams, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tp, ok := c.tools[name]
	return tp, ok
}

// sentParams reports whether hdr has an Mcp-Param-* header.
func sentParams(hdr http.Header) bool {
	for k := range hdr {
		if isParamHeader(k) {
			return true
		}
	}
	return false
}

// toolParamsFor returns the bindings of the tool a tools/call m names;
// nil when m is no tools/call or the tool is unknown. A tool this
// gateway has not seen listed (another replica served the tools/list, or
// this process restarted) is looked up in the tool pins — only when the
// client sent Mcp-Param-* headers, so the store is not read for the many
// tools that have none.
func (h *HTTP) toolParamsFor(ctx context.Context, up *upstream, m map[string]any, hinted bool) *toolParams {
	if method, _ := m["method"].(string); method != "tools/call" {
		return nil
	}
	name, _, ok := nameOf(m)
	if !ok {
		return nil
	}
	if tp, ok := up.params.get(name); ok {
		return &tp
	}
	if !hinted || h.opts.Pins == nil || h.opts.Pins.Store == nil {
		return nil
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.opts.Pins.timeout())
	pins, err := h.opts.Pins.Store.ToolPins(sctx, up.server)
	cancel()
	if err != nil {
		h.opts.Logf("mcp %s: reading the tool pins for x-mcp-header: %v", up.server, err)
		return nil
	}
	for _, p := range pins {
		var schema any
		if len(p.InputSchema) > 0 && json.Unmarshal(p.InputSchema, &schema) != nil {
			continue
		}
		if _, known := up.params.get(p.Name); !known {
			up.params.put(p.Name, paramsOf(schema))
		}
	}
	if tp, ok := up.params.get(name); ok {
		return &tp
	}
	return nil
}

// checkRequestHeaders refuses (HTTP 400, CodeHeaderMismatch, with the
// request's id) a POST of one message whose standard headers disagree
// with it; true when the POST may go on. Batches (which 2026-07-28 does
// not allow) and clients of earlier versions are not checked.
func (h *HTTP) checkRequestHeaders(w http.ResponseWriter, r *http.Request, up *upstream, msgs []*message, isBatch bool) bool {
	if isBatch || len(msgs) != 1 {
		return true
	}
	m := msgs[0].m
	if !hasStandardHeaders(r.Header.Get(hdrProtocolVersion)) && metaVersion(m) == "" {
		return true
	}
	tp := h.toolParamsFor(r.Context(), up, m, sentParams(r.Header))
	err := checkHeaders(r.Header, m, tp)
	if err == nil {
		return true
	}
	var id json.RawMessage
	if msgs[0].isRequest() {
		id = msgs[0].id
	}
	h.opts.Logf("mcp %s: POST refused: %v", up.server, err)
	jsonrpc.WriteJSON(w, http.StatusBadRequest, errorMessage(id, CodeHeaderMismatch, err.Error()))
	return false
}

// setStandardHeaders puts on an upstream POST whose Mcp-Protocol-Version
// is 2026-07-28 or later the standard headers of the one message it
// carries, body, rebuilt from body; whatever else named Mcp-Method,
// Mcp-Name or Mcp-Param-* is removed (the client's copies are never
// forwarded; nor are configured ones).
func (h *HTTP) setStandardHeaders(ctx context.Context, req *http.Request, r *http.Request, up *upstream, body []byte, single bool) {
	stripStandardHeaders(req.Header)
	if !single || !hasStandardHeaders(req.Header.Get(hdrProtocolVersion)) {
		return
	}
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return // cannot happen: it was parsed or encoded here
	}
	var clientName string
	hinted := false
	if r != nil {
		clientName = r.Header.Get(hdrName)
		hinted = sentParams(r.Header)
	}
	for k, v := range standardHeaders(m, h.toolParamsFor(ctx, up, m, hinted), clientName) {
		req.Header[k] = v
	}
}
