package aos

import (
	"bytes"
	"fmt"
	"strings"
	"unsafe"

	"github.com/wardenhq/warden/jsonrpc"
)

// JSON-RPC 2.0 error codes the endpoint answers with.
const (
	CodeParseError     = jsonrpc.CodeParseError     // the body is not JSON
	CodeInvalidRequest = jsonrpc.CodeInvalidRequest // not a JSON-RPC request, the body is over the limit, or ambiguous
	CodeMethodNotFound = jsonrpc.CodeMethodNotFound // unknown method
	CodeInvalidParams  = jsonrpc.CodeInvalidParams  // params do not fit the method
	CodeInternalError  = jsonrpc.CodeInternal       // the endpoint failed
)

// Error is a JSON-RPC error object, as answered on the wire.
type Error struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

func invalidRequest(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidRequest, Message: "invalid request: " + fmt.Sprintf(format, args...)}
}

// fieldError names a params field that is missing or has the wrong type.
type fieldError struct {
	field, reason string
}

func (e *fieldError) rpc() *Error {
	return &Error{Code: CodeInvalidParams, Message: "invalid params: " + e.field + ": " + e.reason,
		Data: map[string]any{"field": e.field, "reason": e.reason}}
}

// call is one JSON-RPC request of a body, as parsed: the raw text of the
// members the endpoint needs and the decoded params.
type call struct {
	body      []byte // the whole HTTP body; spans index into it
	start     int    // the request object is body[start:end]
	end       int
	isObject  bool
	hasID     bool
	id        any
	idRaw     []byte
	jsonrpc   any
	hasMethod bool
	method    any
	hasParams bool
	params    any
	paramsRaw []byte
	pspans    []span // members of params, when it is an object
}

// member returns the raw text of params member key ("" if absent).
func (c *call) member(key string) []byte {
	for i := len(c.pspans) - 1; i >= 0; i-- { // last duplicate wins
		if s := c.pspans[i]; s.key == key {
			return c.body[s.start:s.end]
		}
	}
	return nil
}

// idText is the request id as text for the trace: a string id unquoted, a
// number as written, "" for null or a notification.
func (c *call) idText() string {
	switch v := c.id.(type) {
	case string:
		return v
	case float64:
		return string(c.idRaw)
	}
	return ""
}

var quote = []byte{'"'}

// batchLimitError is a batch with more entries than the limit: an invalid
// request, found while parsing the entry past the limit, before any entry
// is decided (and without building the rest).
type batchLimitError struct{ limit int }

func (e *batchLimitError) Error() string {
	return fmt.Sprintf("batch exceeds the limit of %d entries (limits.batch)", e.limit)
}

// parseBody parses an HTTP body: one request object, or a batch (an array)
// of them. batch reports the array form. Any syntax error anywhere is a
// parse error for the whole body, as JSON-RPC 2.0 requires. A batch of more
// than maxBatch entries (maxBatch > 0) fails with *batchLimitError as soon
// as the entry past the limit begins: the text after it is not read.
//
// The calls belong to st: they are valid until st is released.
func (st *parseState) parseBody(body []byte, maxBatch int) (calls []*call, batch bool, err error) {
	if len(body) == 0 {
		return nil, false, &syntaxError{msg: "empty body"}
	}
	p := &st.p
	p.s = unsafe.String(unsafe.SliceData(body), len(body))
	// Most bodies have at most one string value per four quotes (a key
	// and a value each): the first chunk of boxed strings fits them.
	p.box.hint = bytes.Count(body, quote)/4 + 8
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '[' {
		if err := p.enter(); err != nil {
			return nil, true, err
		}
		p.i++
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return nil, true, p.end()
		}
		for {
			if maxBatch > 0 && len(st.calls) == maxBatch {
				return nil, true, &batchLimitError{maxBatch}
			}
			c := &st.one
			if len(st.calls) > 0 {
				c = new(call)
			}
			if err := p.call(body, c); err != nil {
				return nil, true, err
			}
			st.calls = append(st.calls, c)
			p.ws()
			if p.i >= len(p.s) {
				return nil, true, p.fail("unexpected end of JSON input")
			}
			if p.s[p.i] == ']' {
				p.i++
				return st.calls, true, p.end()
			}
			if p.s[p.i] != ',' {
				return nil, true, p.fail("invalid character %q after array element", p.s[p.i])
			}
			p.i++
		}
	}
	if err := p.call(body, &st.one); err != nil {
		return nil, false, err
	}
	st.calls = append(st.calls, &st.one)
	return st.calls, false, p.end()
}

// call parses one request into c (zero but for its pspans buffer): an
// object, whose envelope members are kept, or any other value (an invalid
// request).
func (p *parser) call(body []byte, c *call) error {
	p.ws()
	c.body, c.start = body, p.i
	if p.i >= len(p.s) || p.s[p.i] != '{' {
		_, err := p.value()
		c.end = p.i
		return err
	}
	c.isObject = true
	empty, err := p.openObject()
	if err != nil {
		return err
	}
	var seenBuf [8]string // the envelope's keys, for duplicates
	seen := seenBuf[:0]
	for more := !empty; more; {
		k, err := p.key()
		if err != nil {
			return err
		}
		for _, o := range seen {
			if strings.EqualFold(o, k) {
				if o == k {
					p.ambiguous(&ambiguityError{"", fmt.Sprintf("duplicate key %q", k)})
				} else {
					p.ambiguous(&ambiguityError{"", fmt.Sprintf("keys %q and %q differ only in case", o, k)})
				}
			}
		}
		if len(seen) < smallObject {
			seen = append(seen, k)
		}
		start := p.i
		p.path = append(p.path, pathElem{key: k, idx: -1})
		var v any
		if k == "params" && p.i < len(p.s) && p.s[p.i] == '{' {
			if c.pspans == nil {
				c.pspans = make([]span, 0, 8)
			}
			c.pspans = c.pspans[:0]
			v, err = p.object(&c.pspans)
		} else {
			v, err = p.value()
		}
		if err != nil {
			return err
		}
		p.path = p.path[:len(p.path)-1]
		switch k {
		case "jsonrpc":
			c.jsonrpc = v
		case "id":
			c.hasID, c.id, c.idRaw = true, v, body[start:p.i]
		case "method":
			c.hasMethod, c.method = true, v
		case "params":
			c.hasParams, c.params, c.paramsRaw = true, v, body[start:p.i]
			if _, ok := v.(map[string]any); !ok {
				c.pspans = nil
			}
		}
		if more, err = p.nextMember(); err != nil {
			return err
		}
	}
	c.end = p.i
	return nil
}

// check validates the JSON-RPC envelope: it returns the method and params,
// or an invalid-request error.
func (c *call) check() (method string, params map[string]any, rerr *Error) {
	if !c.isObject {
		return "", nil, invalidRequest("expected a JSON-RPC request object")
	}
	if c.hasID {
		switch c.id.(type) {
		case string, float64, nil:
		default:
			c.hasID, c.idRaw = false, nil // unusable: answer with id null
			return "", nil, invalidRequest("id must be a string, a number or null")
		}
	}
	if s, ok := c.jsonrpc.(string); !ok || s != "2.0" {
		return "", nil, invalidRequest(`jsonrpc must be "2.0"`)
	}
	if !c.hasMethod {
		return "", nil, invalidRequest("missing method")
	}
	method, ok := c.method.(string)
	if !ok {
		return "", nil, invalidRequest("method must be a string")
	}
	switch v := c.params.(type) {
	case map[string]any:
		params = v
	case nil:
		params = map[string]any{}
	case []any:
		// By-position params make a valid JSON-RPC request; no AOS method
		// takes them: invalid params, once the method is known.
		if methodKinds[method] == kindUnknown {
			return "", nil, methodNotFound(method)
		}
		return "", nil, &Error{Code: CodeInvalidParams, Message: "invalid params: params: expected an object, got an array",
			Data: map[string]any{"field": "params", "reason": "expected an object, got an array"}}
	default:
		return "", nil, invalidRequest("params must be an object or an array")
	}
	return method, params, nil
}

// idKey renders a decoded JSON-RPC id for a correlation cache key.
func idKey(v any) (string, bool) { return jsonrpc.IDKey(v) }
