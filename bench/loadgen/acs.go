package main

// ACS mode: the -body file is an OWASP Agent Control Standard (ACS v0.1.0) request.
// Each worker is one ACS session (its own session_id): it sends handshake/hello once
// before the clock starts, then sends the template's request afresh each time — a new
// JSON-RPC id, params.request_id (a UUID: a Guardian refuses a replayed one) and
// params.timestamp (now: a Guardian refuses one outside its skew window), in the
// session's metadata.session_id — and, with a key, signed as ACS-Core signs
// (docs/acs.md, internal/acsclient): HMAC-SHA256 under the session key
// HKDF-SHA256(key material, info session_id) over the RFC 8785 (JCS) form of the
// whole message without params.signature.
//
// The client stays cheap, as in AOS mode, so that the machine's cores go to the server
// under test. The template is canonicalized once (internal/acsclient.Canonical) with
// placeholder strings where the per-request values go; since JCS orders members by
// name and these values are plain ASCII strings that JCS writes as they are, the JCS
// form of each request is that template with the values spliced in — the same bytes a
// per-request canonicalization gives (TestACSBuild checks them against
// acsclient.Canonical). A request then costs a few appends, one HMAC-SHA256 of the
// message (~0.8 KB) and a base64 encoding; the session key is derived once per session.
// The body sent is the canonical message with the signature inserted as params' last
// member (a Guardian canonicalizes what it receives). BenchmarkACSBuild measures this,
// and BenchmarkACSBuildJCS what a general client pays to encode and canonicalize each
// request instead.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"maps"
	randv2 "math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/wardenhq/warden/internal/acsclient"
)

// acsHello is the ClientHello each session sends: the one method the benchmark uses.
var acsHello = map[string]any{
	"acs_versions_supported": []any{acsclient.Version},
	"methods_implemented":    []any{"steps/toolCallRequest"},
	"transports_supported":   []any{"http"},
	"provenance_producer":    "none",
}

// The placeholders of the canonical templates: plain ASCII, written by JCS as they
// are, and unlikely in a payload (newCanon refuses a template where one is not found
// exactly once).
const (
	phID        = "LOADGEN-PLACEHOLDER-ID-7d1f0c"
	phRequestID = "LOADGEN-PLACEHOLDER-REQUEST-ID-7d1f0c"
	phTimestamp = "LOADGEN-PLACEHOLDER-TIMESTAMP-7d1f0c"
	phSession   = "LOADGEN-PLACEHOLDER-SESSION-ID-7d1f0c"
)

// slot says which value goes between two segments of a canonical template.
type slot uint8

const (
	slotID slot = iota
	slotRequestID
	slotTimestamp
	slotSession
)

// canon is the JCS form of a request split around its per-request values:
// segs[0] slots[0] segs[1] slots[1] ... segs[n].
type canon struct {
	segs  [][]byte
	slots []slot
}

// newCanon canonicalizes msg (holding the placeholders) and splits it.
func newCanon(msg map[string]any) (*canon, error) {
	b, err := acsclient.Canonical(msg)
	if err != nil {
		return nil, err
	}
	type at struct {
		pos int
		s   slot
		n   int
	}
	var ats []at
	for s, ph := range map[slot]string{slotID: phID, slotRequestID: phRequestID, slotTimestamp: phTimestamp, slotSession: phSession} {
		q := []byte(`"` + ph + `"`)
		if bytes.Count(b, q) != 1 {
			return nil, fmt.Errorf("ACS body: the template holds %q (loadgen's placeholder) itself", ph)
		}
		ats = append(ats, at{bytes.Index(b, q), s, len(q)})
	}
	slices.SortFunc(ats, func(x, y at) int { return x.pos - y.pos })
	c := &canon{}
	prev := 0
	for _, a := range ats {
		c.segs = append(c.segs, b[prev:a.pos])
		c.slots = append(c.slots, a.s)
		prev = a.pos + a.n
	}
	c.segs = append(c.segs, b[prev:])
	if !bytes.HasSuffix(c.segs[len(c.segs)-1], []byte("}}")) {
		// In JCS order params is the message's last member ("id" < "jsonrpc" <
		// "method" < "params"): the message ends with params' "}" and its own.
		return nil, errors.New("ACS body: the canonical message does not end with params")
	}
	return c, nil
}

// withSession returns c with the session id filled in (a per-session template).
func (c *canon) withSession(sid string) *canon {
	out := &canon{}
	cur := []byte{}
	for i, s := range c.slots {
		cur = append(cur, c.segs[i]...)
		if s == slotSession {
			cur = append(append(append(cur, '"'), sid...), '"')
			continue
		}
		out.segs = append(out.segs, cur)
		out.slots = append(out.slots, s)
		cur = []byte{}
	}
	out.segs = append(out.segs, append(cur, c.segs[len(c.segs)-1]...))
	return out
}

// acsTemplate is the parsed ACS request the workers' requests are built from.
type acsTemplate struct {
	method string
	step   *canon // the template's request
	hello  *canon // handshake/hello with acsHello, in the same envelope
	key    []byte // the key material (nil: unsigned)
	keyID  string
	keyIDq []byte // keyID as a JSON string
	// params and metadata are the template's (params without request_id, timestamp,
	// signature, metadata), for tests and the benchmarks of a general client.
	params, metadata map[string]any
}

// newACSTemplate parses raw, an ACS request (a JSON object with jsonrpc, id, method
// and params, params holding metadata and payload objects), and reads the key.
func newACSTemplate(raw []byte, keyID, keyFile string) (*acsTemplate, error) {
	if (keyID == "") != (keyFile == "") {
		return nil, errors.New("-acs-key-id and -acs-key-file go together")
	}
	msg, err := acsclient.DecodeObject(raw) // numbers stay as written (json.Number)
	if err != nil {
		return nil, fmt.Errorf("body is not a JSON object: %w", err)
	}
	for k := range msg {
		switch k {
		case "jsonrpc", "id", "method", "params":
		default: // the ACS request envelope allows no other member
			return nil, fmt.Errorf("ACS body: unexpected top-level member %q (want jsonrpc, id, method, params)", k)
		}
	}
	t := &acsTemplate{keyID: keyID}
	var ok bool
	if t.method, ok = msg["method"].(string); !ok || t.method == "" {
		return nil, errors.New("ACS body: method is missing")
	}
	params, ok := msg["params"].(map[string]any)
	if !ok {
		return nil, errors.New("ACS body: params is not an object")
	}
	if t.metadata, ok = params["metadata"].(map[string]any); !ok {
		return nil, errors.New("ACS body: params.metadata is not an object")
	}
	if _, ok := t.metadata["agent_id"].(string); !ok {
		return nil, errors.New("ACS body: params.metadata.agent_id is missing")
	}
	if ss, ok := t.metadata["session_state"].(map[string]any); ok && ss["chain_hash"] != nil {
		return nil, errors.New("ACS body: params.metadata.session_state.chain_hash would not match a fresh session's chain; remove it")
	}
	if _, ok := params["payload"].(map[string]any); !ok {
		return nil, errors.New("ACS body: params.payload is not an object")
	}
	if _, ok := params["nonce"]; ok {
		return nil, errors.New("ACS body: params.nonce would be replayed by every request; remove it (request_id is renewed)")
	}
	t.params = maps.Clone(params)
	for _, k := range []string{"request_id", "timestamp", "signature", "metadata"} {
		delete(t.params, k)
	}
	if t.step, err = newCanon(placeholders(t.method, t.params, t.metadata, nil)); err != nil {
		return nil, err
	}
	if t.hello, err = newCanon(placeholders("handshake/hello", t.params, t.metadata, acsHello)); err != nil {
		return nil, err
	}
	if keyFile != "" {
		b, err := os.ReadFile(keyFile)
		if err != nil {
			return nil, fmt.Errorf("ACS key file: %w", err)
		}
		s := strings.TrimPrefix(strings.TrimSpace(string(b)), "hex:")
		if t.key, err = hex.DecodeString(s); err != nil || len(t.key) == 0 {
			return nil, fmt.Errorf("ACS key file %s: want the key material as hex", keyFile)
		}
		t.keyIDq, _ = json.Marshal(keyID)
	}
	return t, nil
}

// placeholders is the request message with the placeholders for its per-request
// values; payload nil keeps the template's.
func placeholders(method string, params, metadata map[string]any, payload any) map[string]any {
	p := maps.Clone(params)
	if payload != nil {
		p["payload"] = payload
	}
	md := maps.Clone(metadata)
	md["session_id"] = phSession
	p["metadata"], p["request_id"], p["timestamp"] = md, phRequestID, phTimestamp
	return map[string]any{"jsonrpc": "2.0", "id": phID, "method": method, "params": p}
}

// acsSession is one worker's ACS session.
type acsSession struct {
	tpl         *acsTemplate
	id          string // metadata.session_id
	step, hello *canon // the templates with this session's id
	mac         hash.Hash
	rng         *randv2.ChaCha8 // request ids
	canon       []byte          // the current request's JCS form (the signing input)
	sig         []byte

	prep  time.Duration // time spent building requests
	prepN int64
}

func (t *acsTemplate) session() *acsSession {
	s := &acsSession{tpl: t, id: uuid.NewString()}
	s.step, s.hello = t.step.withSession(s.id), t.hello.withSession(s.id)
	var seed [32]byte
	rand.Read(seed[:])
	s.rng = randv2.NewChaCha8(seed)
	if t.key != nil {
		k, err := acsclient.SessionKey(t.key, s.id)
		if err != nil {
			panic(err) // HKDF-SHA256 fails only for an output longer than 255*32 bytes
		}
		s.mac = hmac.New(sha256.New, k)
	}
	return s
}

// build appends the request to dst: the step (or the handshake) with the JSON-RPC id
// idq (a JSON string), a fresh random (version 4) UUID as request_id and now as its
// timestamp, signed when the session has a key.
func (s *acsSession) build(dst []byte, hello bool, idq []byte, now time.Time) []byte {
	c := s.step
	if hello {
		c = s.hello
	}
	b := s.canon[:0]
	for i, sl := range c.slots {
		b = append(b, c.segs[i]...)
		switch sl {
		case slotID:
			b = append(b, idq...)
		case slotRequestID:
			b = appendUUID(append(b, '"'), s.rng)
			b = append(b, '"')
		case slotTimestamp:
			b = now.UTC().AppendFormat(append(b, '"'), time.RFC3339Nano)
			b = append(b, '"')
		}
	}
	b = append(b, c.segs[len(c.segs)-1]...)
	s.canon = b
	if s.mac == nil {
		return append(dst, b...)
	}
	s.mac.Reset()
	s.mac.Write(b)
	var sum [sha256.Size]byte
	s.sig = base64.StdEncoding.AppendEncode(s.sig[:0], s.mac.Sum(sum[:0]))
	dst = append(dst, b[:len(b)-2]...) // before params' "}" and the message's
	dst = append(dst, `,"signature":{"algorithm":"`+acsclient.Algorithm+`","value":"`...)
	dst = append(dst, s.sig...)
	dst = append(dst, `","key_id":`...)
	dst = append(dst, s.tpl.keyIDq...)
	return append(dst, "}}}"...)
}

// appendUUID appends a random version 4 UUID in its 36-character form.
func appendUUID(b []byte, r *randv2.ChaCha8) []byte {
	var u [16]byte
	r.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	var h [36]byte
	hex.Encode(h[0:8], u[0:4])
	h[8] = '-'
	hex.Encode(h[9:13], u[4:6])
	h[13] = '-'
	hex.Encode(h[14:18], u[6:8])
	h[18] = '-'
	hex.Encode(h[19:23], u[8:10])
	h[23] = '-'
	hex.Encode(h[24:], u[10:])
	return append(b, h[:]...)
}

// doACS sends one ACS request of the worker's session (handshake/hello when hello is
// set, else the template's) with the id in w.idq, and checks the answer: HTTP 200, a
// JSON-RPC result (an ACS error answer is an error) echoing the id and, but for the
// handshake, holding a non-empty result.decision.
func (w *worker) doACS(ctx context.Context, hello bool) error {
	t0 := time.Now()
	w.body = w.acs.build(w.body[:0], hello, w.idq, t0)
	w.acs.prep += time.Since(t0)
	w.acs.prepN++
	b, err := w.post(ctx)
	if err != nil {
		return err
	}
	a, err := readAnswer(b)
	switch {
	case err != nil:
		return &bodyError{why: "answer is not a JSON-RPC response object (" + err.Error() + ")", body: snippet(b)}
	case a.err != nil:
		return &bodyError{why: "ACS error answer", body: snippet(b)}
	case a.result == nil:
		return &bodyError{why: "answer without a result", body: snippet(b)}
	case !bytes.Equal(a.id, w.idq):
		return &bodyError{why: "answer for another id than " + string(w.idq), body: snippet(b)}
	case !hello && !a.decision:
		return &bodyError{why: "result without a decision", body: snippet(b)}
	}
	return nil
}

// answer is what loadgen reads of a JSON-RPC answer: the raw id, result and error
// members, and whether the result holds a non-empty string "decision".
type answer struct {
	id, result, err []byte
	decision        bool
}

// readAnswer reads the top-level members of a JSON-RPC answer object, and the
// members of its result, with a structural scan (strings, escapes and nesting; no
// decoding): a few hundred nanoseconds where encoding/json takes tens of
// microseconds, so that the client's check costs the server under test no CPU worth
// the name. A "null" result or error counts as absent.
func readAnswer(b []byte) (answer, error) {
	var a answer
	err := members(b, func(k, v []byte) error {
		switch string(k) {
		case `"id"`:
			a.id = v
		case `"result"`:
			if string(v) != "null" {
				a.result = v
			}
		case `"error"`:
			if string(v) != "null" {
				a.err = v
			}
		}
		return nil
	})
	if err != nil || a.result == nil || a.result[0] != '{' {
		return a, err
	}
	err = members(a.result, func(k, v []byte) error {
		if string(k) == `"decision"` && len(v) > 2 && v[0] == '"' {
			a.decision = true
		}
		return nil
	})
	return a, err
}

// members calls fn with each member's raw (quoted) key and raw value of the JSON
// object b.
func members(b []byte, fn func(k, v []byte) error) error {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errors.New("not an object")
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return errors.New("want a member name")
		}
		ke, err := skipValue(b, i)
		if err != nil {
			return err
		}
		k := b[i:ke]
		i = skipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			return errors.New("want ':'")
		}
		vs := skipWS(b, i+1)
		ve, err := skipValue(b, vs)
		if err != nil {
			return err
		}
		if err := fn(k, b[vs:ve]); err != nil {
			return err
		}
		i = skipWS(b, ve)
		switch {
		case i < len(b) && b[i] == ',':
			i = skipWS(b, i+1)
		case i < len(b) && b[i] == '}':
			return nil
		default:
			return errors.New("want ',' or '}'")
		}
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errors.New("unexpected end")
	}
	switch b[i] {
	case '"':
		for j := i + 1; ; j++ {
			k := bytes.IndexByte(b[j:], '"')
			if k < 0 {
				return 0, errors.New("unterminated string")
			}
			j += k
			n := 0 // backslashes before the quote: an odd count escapes it
			for p := j - 1; p > i && b[p] == '\\'; p-- {
				n++
			}
			if n%2 == 0 {
				return j + 1, nil
			}
		}
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e, err := skipValue(b, j)
				if err != nil {
					return 0, err
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errors.New("unterminated object or array")
	default: // a number, true, false or null
		j := i
	scan:
		for ; j < len(b); j++ {
			switch b[j] {
			case ' ', '\t', '\r', '\n', ',', '}', ']':
				break scan
			}
		}
		if j == i {
			return 0, fmt.Errorf("unexpected %q", b[i])
		}
		return j, nil
	}
}

// handshake negotiates the worker's session (its id is "<prefix>hello").
func (w *worker) handshake(ctx context.Context) error {
	w.idq = append(append(append(w.idq[:0], '"'), w.prefix...), `hello"`...)
	return w.doACS(ctx, true)
}

// handshakeAll gives every worker its own session and negotiates them, a few at a
// time; every failure is returned.
func handshakeAll(workers []*worker, tpl *acsTemplate, timeout time.Duration) error {
	var wg sync.WaitGroup
	errs := make([]error, len(workers))
	sem := make(chan struct{}, 8)
	for i, w := range workers {
		w.acs = tpl.session()
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			if err := w.handshake(ctx); err != nil {
				errs[i] = fmt.Errorf("handshake of connection %d: %w", i, err)
			}
			w.acs.prep, w.acs.prepN = 0, 0 // the handshake is not part of the measured work
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
