package aos

import (
	"fmt"
	"unsafe"

	"github.com/wardenhq/warden/jsonrpc"
	"github.com/wardenhq/warden/jsonstrict"
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
type Error = jsonrpc.Error

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
	pspans    []jsonstrict.Span // members of params, when it is an object
}

// member returns the raw text of params member key ("" if absent).
func (c *call) member(key string) []byte {
	for i := len(c.pspans) - 1; i >= 0; i-- { // last duplicate wins
		if s := c.pspans[i]; s.Key == key {
			return c.body[s.Start:s.End]
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

// parseBody parses an HTTP body: one request object, or a batch (an array)
// of them. batch reports the array form. Any syntax error anywhere is a
// parse error for the whole body, as JSON-RPC 2.0 requires. A batch of more
// than maxBatch entries (maxBatch > 0) fails with *jsonrpc.BatchLimitError
// as soon as the entry past the limit begins: the text after it is not
// read.
//
// The calls belong to st: they are valid until st is released.
func (st *parseState) parseBody(body []byte, maxBatch int) (calls []*call, batch bool, err error) {
	if len(body) == 0 {
		return nil, false, &jsonstrict.SyntaxError{Msg: "empty body"}
	}
	p := &st.p
	p.Init(unsafe.String(unsafe.SliceData(body), len(body)))
	if p.Peek() == '[' {
		err := p.WalkArray(func() error {
			if maxBatch > 0 && len(st.calls) == maxBatch {
				return &jsonrpc.BatchLimitError{Limit: maxBatch}
			}
			c := &st.one
			if len(st.calls) > 0 {
				c = new(call)
			}
			if err := parseCall(p, body, c); err != nil {
				return err
			}
			st.calls = append(st.calls, c)
			return nil
		})
		if err != nil {
			return nil, true, err
		}
		return st.calls, true, p.End()
	}
	if err := parseCall(p, body, &st.one); err != nil {
		return nil, false, err
	}
	st.calls = append(st.calls, &st.one)
	return st.calls, false, p.End()
}

// parseCall parses one request into c (zero but for its pspans buffer): an
// object, whose envelope members are kept, or any other value (an invalid
// request).
func parseCall(p *jsonstrict.Parser, body []byte, c *call) error {
	c.isObject = p.Peek() == '{'
	c.body, c.start = body, p.Pos()
	if !c.isObject {
		_, err := p.Value()
		c.end = p.Pos()
		return err
	}
	err := p.WalkObject(func(k string) error {
		start := p.Pos()
		var v any
		var err error
		if k == "params" && p.Peek() == '{' {
			if c.pspans == nil {
				c.pspans = make([]jsonstrict.Span, 0, 8)
			}
			c.pspans = c.pspans[:0]
			v, err = p.Object(&c.pspans)
		} else {
			v, err = p.Value()
		}
		if err != nil {
			return err
		}
		switch k {
		case "jsonrpc":
			c.jsonrpc = v
		case "id":
			c.hasID, c.id, c.idRaw = true, v, body[start:p.Pos()]
		case "method":
			c.hasMethod, c.method = true, v
		case "params":
			c.hasParams, c.params, c.paramsRaw = true, v, body[start:p.Pos()]
			if _, ok := v.(map[string]any); !ok {
				c.pspans = nil
			}
		}
		return nil
	})
	c.end = p.Pos()
	return err
}

// check validates the JSON-RPC envelope: it returns the method and params,
// or an invalid-request error.
func (c *call) check() (method string, params map[string]any, rerr *Error) {
	if !c.isObject {
		return "", nil, invalidRequest("expected a JSON-RPC request object")
	}
	if c.hasID && !jsonrpc.ValidID(c.id) {
		c.hasID, c.idRaw = false, nil // unusable: answer with id null
		return "", nil, invalidRequest("id must be a string, a number or null")
	}
	if s, ok := c.jsonrpc.(string); !ok || s != jsonrpc.Version {
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
