package jsonrpc

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"unsafe"
)

// jsonHeaders are the values of the two headers of a JSON answer and the
// digits of its length, in one allocation instead of three (Header.Set
// allocates a slice for each value, strconv.Itoa the digits).
type jsonHeaders struct {
	vals   [2]string
	digits [20]byte
}

// WriteJSON answers an HTTP request with status and the JSON document b:
// Content-Type application/json and Content-Length set (replacing any set
// before). It is how every surface writes a JSON answer; w does not keep b.
func WriteJSON(w http.ResponseWriter, status int, b []byte) {
	hv := &jsonHeaders{}
	n := strconv.AppendInt(hv.digits[:0], int64(len(b)), 10)
	hv.vals = [2]string{"application/json", unsafe.String(&hv.digits[0], len(n))}
	h := w.Header()
	// The keys are canonical already; each value slice is capped at its
	// length, so an append to one cannot write over the other.
	h["Content-Type"] = hv.vals[0:1:1]
	h["Content-Length"] = hv.vals[1:2:2]
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// WriteValue answers with status and v encoded as json.Encoder writes it
// without HTML escaping (a trailing newline included). A value that does
// not encode is answered with an empty body.
func WriteValue(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		buf.Reset()
	}
	WriteJSON(w, status, buf.Bytes())
}
