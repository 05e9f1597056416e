package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/wardenhq/warden/acs"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/internal/acsclient"
	"github.com/wardenhq/warden/storetest"
)

const acsBody = "../requests/acs_tool_call.json"

var benchKey = []byte("0123456789abcdef0123456789abcdef")

// keyFile writes key as hex (with the config's "hex:" prefix) and returns its path.
func keyFile(t testing.TB, key []byte) string {
	p := filepath.Join(t.TempDir(), "acs.key")
	if err := os.WriteFile(p, []byte("hex:"+hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func acsTpl(t testing.TB, keyID string, key []byte) *acsTemplate {
	t.Helper()
	raw, err := os.ReadFile(acsBody)
	if err != nil {
		t.Fatal(err)
	}
	kf := ""
	if key != nil {
		kf = keyFile(t, key)
	}
	tpl, err := newACSTemplate(raw, keyID, kf)
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

// TestACSBuild: a built request is the template with a fresh request_id, timestamp
// and the session's session_id; the bytes loadgen signs are exactly the JCS form
// internal/acsclient computes for that message, and the signature is the one
// acsclient.Sign computes (and Verify accepts).
func TestACSBuild(t *testing.T) {
	tpl := acsTpl(t, "k1", benchKey)
	s := tpl.session()
	var ids []string
	for i := range 3 {
		now := time.Now().Add(time.Duration(i) * 1234567 * time.Nanosecond)
		idq := []byte(`"lg-x-0-` + string(rune('1'+i)) + `"`)
		body := s.build(nil, false, idq, now)
		msg, err := acsclient.DecodeObject(body)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if err := acsclient.Verify(msg, "params", benchKey, "k1", s.id); err != nil {
			t.Fatalf("signature: %v\n%s", err, body)
		}
		params := msg["params"].(map[string]any)
		rid := params["request_id"].(string)
		if _, err := uuid.Parse(rid); err != nil || rid == "69dbf4c3-be33-4694-a9f0-8d3a824c5d5b" {
			t.Fatalf("request_id %q not renewed", rid)
		}
		ids = append(ids, rid)
		if ts, _ := time.Parse(time.RFC3339Nano, params["timestamp"].(string)); !ts.Equal(now) {
			t.Fatalf("timestamp %v, want %v", params["timestamp"], now)
		}

		// The same message built as a general client would, canonicalized per request.
		want := generalMessage(tpl, s, strings.Trim(string(idq), `"`), rid, now)
		c, err := acsclient.Canonical(want)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(c, s.canon) {
			t.Fatalf("signing input\n%s\nwant JCS\n%s", s.canon, c)
		}
		if err := acsclient.Sign(want, "params", benchKey, "k1", s.id); err != nil {
			t.Fatal(err)
		}
		if got, w := params["signature"], want["params"].(map[string]any)["signature"]; !reflect.DeepEqual(got, w) {
			t.Fatalf("signature %v, acsclient.Sign gives %v", got, w)
		}
		md := params["metadata"].(map[string]any)
		if md["session_id"] != s.id || md["agent_id"] != "1c88ab7d-395f-449a-af51-6028f9e842ea" || msg["method"] != "steps/toolCallRequest" {
			t.Fatalf("metadata %v, method %v", md, msg["method"])
		}
		args := params["payload"].(map[string]any)["arguments"].(map[string]any)
		if n := args["max_results"].(map[string]any)["value"]; n != json.Number("10") {
			t.Fatalf("max_results %v", n)
		}
	}
	if ids[0] == ids[1] || ids[1] == ids[2] {
		t.Fatalf("request ids repeat: %v", ids)
	}

	// The handshake: the ClientHello as the payload, the same envelope.
	body := s.build(nil, true, []byte(`"h"`), time.Now())
	msg, err := acsclient.DecodeObject(body)
	if err != nil {
		t.Fatal(err)
	}
	if err := acsclient.Verify(msg, "params", benchKey, "k1", s.id); err != nil {
		t.Fatal(err)
	}
	if msg["method"] != "handshake/hello" || msg["params"].(map[string]any)["payload"].(map[string]any)["provenance_producer"] != "none" {
		t.Fatalf("hello %s", body)
	}

	// Unsigned: the canonical message, no signature.
	u := acsTpl(t, "", nil).session()
	body = u.build(nil, false, []byte(`"x"`), time.Now())
	if bytes.Contains(body, []byte("signature")) || !json.Valid(body) || !bytes.Equal(body, u.canon) {
		t.Fatalf("unsigned body: %s", body)
	}
}

// generalMessage is the request as a general client builds it: a fresh message.
func generalMessage(tpl *acsTemplate, s *acsSession, id, rid string, now time.Time) map[string]any {
	params := maps.Clone(tpl.params)
	md := maps.Clone(tpl.metadata)
	md["session_id"] = s.id
	params["metadata"], params["request_id"], params["timestamp"] = md, rid, now.UTC().Format(time.RFC3339Nano)
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": tpl.method, "params": params}
}

func TestReadAnswer(t *testing.T) {
	cases := []struct {
		in               string
		id               string
		result, decision bool
		err, bad         bool
	}{
		{`{"id":"a","jsonrpc":"2.0","result":{"type":"final","decision":"allow","x":{"decision":""}}}`, `"a"`, true, true, false, false},
		{` { "jsonrpc" : "2.0" , "id" : 7 , "result" : { "decision" : "deny" , "s" : "}\"{" } } `, `7`, true, true, false, false},
		{`{"id":"a","result":{"negotiated_version":"0.1.0","nested":{"decision":"allow"}}}`, `"a"`, true, false, false, false},
		{`{"id":"a","result":{"decision":""}}`, `"a"`, true, false, false, false},
		{`{"id":"a","result":{"decision":null}}`, `"a"`, true, false, false, false},
		{`{"error":{"code":-32005,"message":"replay","data":{"decision":"x"}},"id":"a","jsonrpc":"2.0"}`, `"a"`, false, false, true, false},
		{`{"id":"a","result":null,"error":{"code":1}}`, `"a"`, false, false, true, false},
		{`{"id":"a","result":{"decision":"allow"`, ``, false, false, false, true},
		{`[{"id":"a"}]`, ``, false, false, false, true},
		{`{"id" "a"}`, ``, false, false, false, true},
	}
	for _, tc := range cases {
		a, err := readAnswer([]byte(tc.in))
		if (err != nil) != tc.bad {
			t.Errorf("%s: err %v", tc.in, err)
			continue
		}
		if tc.bad {
			continue
		}
		if string(a.id) != tc.id || (a.result != nil) != tc.result || a.decision != tc.decision || (a.err != nil) != tc.err {
			t.Errorf("%s: id %s result %s decision %v error %s", tc.in, a.id, a.result, a.decision, a.err)
		}
	}
}

func TestACSTemplateRefusals(t *testing.T) {
	cases := map[string]string{
		"not an object": `[1]`,
		"extra member":  `{"jsonrpc":"2.0","id":1,"method":"m","params":{"metadata":{"agent_id":"a"},"payload":{}},"x":1}`,
		"no params":     `{"jsonrpc":"2.0","id":1,"method":"m"}`,
		"no metadata":   `{"jsonrpc":"2.0","id":1,"method":"m","params":{"payload":{}}}`,
		"no agent":      `{"jsonrpc":"2.0","id":1,"method":"m","params":{"metadata":{},"payload":{}}}`,
		"no payload":    `{"jsonrpc":"2.0","id":1,"method":"m","params":{"metadata":{"agent_id":"a"}}}`,
		"nonce":         `{"jsonrpc":"2.0","id":1,"method":"m","params":{"metadata":{"agent_id":"a"},"payload":{},"nonce":"0123456789abcdef"}}`,
		"chain hash":    `{"jsonrpc":"2.0","id":1,"method":"m","params":{"metadata":{"agent_id":"a","session_state":{"chain_hash":"x"}},"payload":{}}}`,
	}
	for name, in := range cases {
		if _, err := newACSTemplate([]byte(in), "", ""); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := newACSTemplate([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"metadata":{"agent_id":"a"},"payload":{}}}`), "k1", ""); err == nil {
		t.Error("a key id without a key file was accepted")
	}
}

// acsServer serves the real ACS Guardian (bench/policies, an in-memory trace) and
// checks every answer it sends: it counts the decisions by value and verifies each
// answer's signature under the session key of its request.
type acsServer struct {
	*httptest.Server
	store *storetest.Mem
	mu    sync.Mutex
	seen  map[string]int // decision (or "hello", or "error <code>") -> count
	bad   []string       // answers that did not verify
}

func newACSServer(t *testing.T, keys map[string][]byte, require bool) *acsServer {
	t.Helper()
	store := storetest.NewMem()
	g, err := guardian.Open(guardian.Options{Policies: []string{"../policies"}, NoBuiltin: true, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close(context.Background()) })
	h, err := acs.NewHandler(g, acs.Options{Sessions: store, Keys: keys, RequireSignatures: require,
		Logf: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	s := &acsServer{store: store, seen: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := io.ReadAll(r.Body)
		rec := httptest.NewRecorder()
		r.Body = io.NopCloser(bytes.NewReader(req))
		h.ServeHTTP(rec, r)
		s.check(req, rec.Body.Bytes(), keys)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *acsServer) check(req, ans []byte, keys map[string][]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, _ := acsclient.DecodeObject(req)
	r, err := acsclient.ParseResponse(ans)
	if err != nil {
		s.bad = append(s.bad, err.Error())
		return
	}
	switch {
	case r.Error != nil:
		s.seen["error"]++
		s.bad = append(s.bad, r.Error.Error())
		return
	case q["method"] == "handshake/hello":
		s.seen["hello"]++
	default:
		s.seen[r.Decision()]++
	}
	params, _ := q["params"].(map[string]any)
	sig, _ := params["signature"].(map[string]any)
	if sig == nil {
		return
	}
	md, _ := params["metadata"].(map[string]any)
	sid, _ := md["session_id"].(string)
	kid, _ := sig["key_id"].(string)
	if err := acsclient.Verify(r.Msg, "result", keys[kid], kid, sid); err != nil {
		s.bad = append(s.bad, err.Error())
	}
}

func runACS(t *testing.T, cfg config) (report, error) {
	t.Helper()
	var out bytes.Buffer
	cfg.json = true
	if cfg.body == "" {
		cfg.body = acsBody
	}
	if cfg.timeout == 0 {
		cfg.timeout = 10 * time.Second
	}
	if cfg.dur == 0 {
		cfg.dur = 2 * time.Second
	}
	err := run(cfg, &out)
	var rep report
	if err == nil {
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("%s: %v", out.Bytes(), err)
		}
	}
	return rep, err
}

// TestACSMode runs loadgen's ACS mode against the real ACS Guardian: signed, then
// unsigned, then with a key the Guardian does not have.
func TestACSMode(t *testing.T) {
	keys := map[string][]byte{"k1": benchKey}
	t.Run("signed", func(t *testing.T) {
		srv := newACSServer(t, keys, true)
		rep, err := runACS(t, config{url: srv.URL + "/acs", conns: 4, max: 200, acsKeyID: "k1", acsKeyFile: keyFile(t, benchKey)})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Decisions < 200 || rep.Errors != 0 || !rep.ACS || !rep.Signed || rep.PrepUS <= 0 {
			t.Fatalf("report %+v", rep)
		}
		srv.mu.Lock()
		defer srv.mu.Unlock()
		// 4 sessions and the probe's: one handshake each; every step allowed.
		if srv.seen["hello"] != 5 || srv.seen["error"] != 0 || srv.seen["allow"] < 201 || len(srv.seen) != 2 {
			t.Fatalf("answers %v", srv.seen)
		}
		if len(srv.bad) > 0 {
			t.Fatalf("%d answers did not verify, first: %s", len(srv.bad), srv.bad[0])
		}
	})
	t.Run("unsigned", func(t *testing.T) {
		srv := newACSServer(t, nil, false)
		rep, err := runACS(t, config{url: srv.URL + "/acs", conns: 2, max: 50, acs: true})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Decisions < 50 || rep.Errors != 0 || !rep.ACS || rep.Signed {
			t.Fatalf("report %+v", rep)
		}
	})
	t.Run("unsigned refused", func(t *testing.T) {
		srv := newACSServer(t, keys, true)
		_, err := runACS(t, config{url: srv.URL + "/acs", conns: 2, max: 10, acs: true})
		if err == nil || !strings.Contains(err.Error(), "ACS error answer") || !strings.Contains(err.Error(), "-32004") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("wrong key", func(t *testing.T) {
		srv := newACSServer(t, keys, true)
		_, err := runACS(t, config{url: srv.URL + "/acs", conns: 2, max: 10, acsKeyID: "k1",
			acsKeyFile: keyFile(t, []byte("another key, another signature!!"))})
		if err == nil || !strings.Contains(err.Error(), "-32004") {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestACSErrorsCounted: an ACS error answer after a good start is counted as a body
// error, not as a decision.
func TestACSErrorsCounted(t *testing.T) {
	var n sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Metadata struct {
					Session string `json:"session_id"`
				} `json:"metadata"`
			} `json:"params"`
		}
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &m)
		c, _ := n.LoadOrStore(m.Params.Metadata.Session, new(int))
		*c.(*int)++ // one connection per session: no race
		w.Header().Set("Content-Type", "application/json")
		switch {
		case m.Method == "handshake/hello":
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"negotiated_version":"0.1.0"}}`))
		case *c.(*int)%2 == 0:
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"decision":"allow"}}`))
		default:
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32005,"message":"replay"}}`))
		}
	}))
	defer srv.Close()
	rep, err := runACS(t, config{url: srv.URL + "/acs", conns: 2, max: 40, acsKeyID: "k1", acsKeyFile: keyFile(t, benchKey)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Decisions < 40 || rep.ErrBody == 0 || rep.ErrBody != rep.Errors || !strings.Contains(rep.FirstErr, "ACS error answer") {
		t.Fatalf("report %+v", rep)
	}
}

// The client's per-request cost in ACS mode, next to AOS's, on one core:
//
//	go test -run '^$' -bench 'Build|Answer' -benchmem ./bench/loadgen
func BenchmarkAOSBuild(b *testing.B) {
	raw, err := os.ReadFile("../requests/tool_call.json")
	if err != nil {
		b.Fatal(err)
	}
	tpl, err := newTemplate(raw)
	if err != nil {
		b.Fatal(err)
	}
	w := &worker{tpl: tpl, prefix: "lg-x-0-"}
	for b.Loop() {
		w.seq++
		w.idq = append(append(append(w.idq[:0], '"'), w.prefix...), '1', '"')
		w.body = append(append(append(w.body[:0], tpl.head...), w.idq...), tpl.tail...)
	}
	b.ReportMetric(float64(len(w.body)), "bytes/req")
}

// BenchmarkACSBuild is loadgen's ACS request: the per-session canonical template with
// the fresh values spliced in, and (signed) one HMAC-SHA256 and a base64 encoding.
func BenchmarkACSBuild(b *testing.B) {
	for _, signed := range []bool{true, false} {
		name := "signed"
		tpl := acsTpl(b, "k1", benchKey)
		if !signed {
			name, tpl = "unsigned", acsTpl(b, "", nil)
		}
		b.Run(name, func(b *testing.B) {
			s := tpl.session()
			var body []byte
			for b.Loop() {
				body = s.build(body[:0], false, []byte(`"lg-x-0-1"`), time.Now())
			}
			b.ReportMetric(float64(len(body)), "bytes/req")
		})
	}
}

// BenchmarkACSBuildJCS is what a general client pays instead: a fresh message
// (map), canonicalized per request with internal/acsclient.Canonical (encoding/json,
// then github.com/gowebpki/jcs), one HMAC under the cached session key and the same
// splice for the body ("jcs"); and "acsclient.Sign" is the straightforward route,
// acsclient.Sign (which derives the session key with HKDF on every call) and a second
// json.Marshal for the body.
func BenchmarkACSBuildJCS(b *testing.B) {
	tpl := acsTpl(b, "k1", benchKey)
	s := tpl.session()
	rid := "69dbf4c3-be33-4694-a9f0-8d3a824c5d5b"
	b.Run("jcs", func(b *testing.B) {
		var body []byte
		for b.Loop() {
			c, err := acsclient.Canonical(generalMessage(tpl, s, "lg-x-0-1", rid, time.Now()))
			if err != nil {
				b.Fatal(err)
			}
			s.mac.Reset()
			s.mac.Write(c)
			s.sig = base64.StdEncoding.AppendEncode(s.sig[:0], s.mac.Sum(nil))
			body = append(append(body[:0], c[:len(c)-2]...), `,"signature":{"algorithm":"HMAC-SHA256","value":"`...)
			body = append(append(append(body, s.sig...), `","key_id":`...), tpl.keyIDq...)
			body = append(body, "}}}"...)
		}
	})
	b.Run("acsclient.Sign", func(b *testing.B) {
		for b.Loop() {
			msg := generalMessage(tpl, s, "lg-x-0-1", rid, time.Now())
			if err := acsclient.Sign(msg, "params", benchKey, "k1", s.id); err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(msg); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkACSAnswer is loadgen's check of one of warden's ACS answers (readAnswer),
// against decoding it with encoding/json and against the AOS check (two
// bytes.Contains).
func BenchmarkACSAnswer(b *testing.B) {
	keys := map[string][]byte{"k1": benchKey}
	store := storetest.NewMem()
	g, err := guardian.Open(guardian.Options{Policies: []string{"../policies"}, NoBuiltin: true, Store: store})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close(context.Background())
	h, err := acs.NewHandler(g, acs.Options{Sessions: store, Keys: keys, RequireSignatures: true})
	if err != nil {
		b.Fatal(err)
	}
	tpl := acsTpl(b, "k1", benchKey)
	s := tpl.session()
	h.Handle(context.Background(), s.build(nil, true, []byte(`"h"`), time.Now()), "http")
	idq := []byte(`"lg-x-0-1"`)
	ans := h.Handle(context.Background(), s.build(nil, false, idq, time.Now()), "http")
	b.Run("readAnswer", func(b *testing.B) {
		for b.Loop() {
			a, err := readAnswer(ans)
			if err != nil || a.result == nil || a.err != nil || !a.decision || !bytes.Equal(a.id, idq) {
				b.Fatalf("%s: %v", ans, err)
			}
		}
		b.ReportMetric(float64(len(ans)), "bytes/answer")
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var a struct {
				ID     json.RawMessage `json:"id"`
				Result *struct {
					Decision string `json:"decision"`
				} `json:"result"`
				Error json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(ans, &a); err != nil || a.Result == nil || a.Result.Decision != "allow" || !bytes.Equal(a.ID, idq) {
				b.Fatalf("%s: %v", ans, err)
			}
		}
	})
	b.Run("aos-style", func(b *testing.B) {
		for b.Loop() {
			if !bytes.Contains(ans, []byte(`"decision"`)) || !bytes.Contains(ans, idq) {
				b.Fatal("no decision")
			}
		}
	})
}
