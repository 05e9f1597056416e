package jsonrpc

import (
	"encoding/json"
	"fmt"
)

// DefaultMaxBatch is the default limit of the entries of a batch
// (limits.batch).
const DefaultMaxBatch = 1000

// BatchLimitError is a batch with more entries than its limit: an invalid
// request (CodeInvalidRequest), refused whole before any entry is decided.
type BatchLimitError struct{ Limit int }

func (e *BatchLimitError) Error() string {
	return fmt.Sprintf("invalid request: batch exceeds the limit of %d entries (limits.batch)", e.Limit)
}

// Split splits a body into its messages: one (batch false, data as it
// is, not checked), or the entries of a batch (an array), each its raw
// text. A batch of more than max entries fails whole with
// *BatchLimitError before any entry is read; one that is not JSON fails
// with encoding/json's error. An empty batch is no entries and no error:
// the caller answers it as the invalid request it is.
func Split(data []byte, max int) (msgs []json.RawMessage, batch bool, err error) {
	if firstByte(data) != '[' {
		return []json.RawMessage{data}, false, nil
	}
	if OverBatch(data, max) {
		return nil, true, &BatchLimitError{Limit: max}
	}
	if err := json.Unmarshal(data, &msgs); err != nil {
		return nil, true, err
	}
	return msgs, true, nil
}

// OverBatch reports whether data, when it is a JSON array, has more than
// max top-level elements. It only counts (strings and nesting are skipped,
// nothing is allocated) and stops at the element past max, so it costs
// little whatever the size of data; text that is not JSON is counted as
// far as it goes and left to the decoder to refuse.
func OverBatch(data []byte, max int) bool {
	i := 0
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	if i == len(data) || data[i] != '[' {
		return false
	}
	depth, n, empty := 0, 0, true
	for ; i < len(data); i++ {
		switch c := data[i]; c {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
			empty = false
		case '[', '{':
			depth++
			if depth > 1 {
				empty = false
			}
		case ']', '}':
			depth--
			if depth == 0 {
				if !empty {
					n++
				}
				return n > max
			}
		case ',':
			if depth == 1 {
				if n++; n >= max {
					return true // a comma after entry max: entry max+1 follows
				}
			}
		default:
			if !isSpace(c) {
				empty = false
			}
		}
	}
	return false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// The default bounds of a JSON-RPC surface's bodies (limits.body and the
// surfaces' Options): a request body of at most DefaultMaxBody bytes, an
// answer of at most DefaultMaxResponse.
const (
	DefaultMaxBody     int64 = 4 << 20
	DefaultMaxResponse int64 = 8 << 20
)
