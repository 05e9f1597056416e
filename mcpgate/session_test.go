package mcpgate

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/internal/sealid"
	"github.com/wardenhq/warden/mcpgate/testdata/mcpserver"
)

var fleetKey = bytes.Repeat([]byte{0x5a}, sealid.KeySize)

func fleetSealer(t testing.TB, keys ...[]byte) *sealid.Sealer {
	t.Helper()
	s, err := sealid.New(keys, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// withPrincipal puts the caller named by the X-Tenant and X-Caller headers
// in the request's context, as server's auth does for a token.
func withPrincipal(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := warden.Principal{Name: r.Header.Get("X-Caller"), Tenant: r.Header.Get("X-Tenant")}
		h.ServeHTTP(w, r.WithContext(warden.WithPrincipal(r.Context(), p)))
	})
}

// replica is one warden: its own decider, trace and sealer (same key).
type replica struct {
	url   string // base URL
	store *memStore
	mu    sync.Mutex
	hits  int
}

func startReplica(t *testing.T, upURL string, s *sealid.Sealer) *replica {
	t.Helper()
	dec, st := testDecider(t)
	gw := NewHTTP(dec, map[string]warden.Upstream{
		"test":  {Name: "test", URL: upURL},
		"other": {Name: "other", URL: upURL},
	}, HTTPOptions{Timeout: 5 * time.Second, Logf: t.Logf, Sessions: s})
	rp := &replica{store: st}
	front := httptest.NewServer(withPrincipal(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rp.mu.Lock()
		rp.hits++
		rp.mu.Unlock()
		gw.ServeHTTP(w, r)
	})))
	t.Cleanup(front.Close)
	rp.url = front.URL
	return rp
}

func (rp *replica) count() int { rp.mu.Lock(); defer rp.mu.Unlock(); return rp.hits }

// roundRobin sends each request to the next replica, as a balancer without
// session affinity does.
type roundRobin struct {
	mu    sync.Mutex
	next  int
	hosts []string
	base  http.RoundTripper
}

func (rr *roundRobin) RoundTrip(r *http.Request) (*http.Response, error) {
	rr.mu.Lock()
	h := rr.hosts[rr.next%len(rr.hosts)]
	rr.next++
	rr.mu.Unlock()
	r = r.Clone(r.Context())
	u, _ := url.Parse(h)
	r.URL.Host, r.Host = u.Host, u.Host
	r.Header.Set("X-Tenant", "acme")
	r.Header.Set("X-Caller", "ci")
	return rr.base.RoundTrip(r)
}

// TestSessionAcrossReplicas: two gateways sharing the session key and
// nothing else, one upstream, and a go-sdk client whose requests alternate
// between them for a whole session.
func TestSessionAcrossReplicas(t *testing.T) {
	for _, jsonResp := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", jsonResp), func(t *testing.T) {
			srv, seen := mcpserver.New()
			log := &upstreamLog{}
			up := httptest.NewServer(log.wrap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
				&mcp.StreamableHTTPOptions{JSONResponse: jsonResp})))
			t.Cleanup(up.Close)
			a := startReplica(t, up.URL, fleetSealer(t, fleetKey))
			b := startReplica(t, up.URL, fleetSealer(t, fleetKey))
			rr := &roundRobin{hosts: []string{a.url, b.url}, base: http.DefaultTransport}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(ctx,
				&mcp.StreamableClientTransport{Endpoint: a.url + "/mcp/test", HTTPClient: &http.Client{Transport: rr}, MaxRetries: -1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			lt, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if names := strings.Join(toolNames(lt), ","); strings.Contains(names, "secret_tool") || !strings.Contains(names, "echo") {
				t.Fatalf("tools = %s", names)
			}
			for i := range 6 {
				r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": fmt.Sprint("hello ", i)}})
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				if got, want := textOf(t, r), fmt.Sprint("echo: hello ", i); got != want {
					t.Fatalf("call %d = %q; want %q", i, got, want)
				}
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wire_money"}); err == nil || !strings.Contains(err.Error(), "denied by warden") {
				t.Fatalf("wire_money: %v; want a denial on either replica", err)
			}
			if n := seen.Count("echo"); n != 6 {
				t.Fatalf("upstream saw %d echo calls; want 6", n)
			}
			if a.count() < 4 || b.count() < 4 {
				t.Fatalf("replica hits %d and %d: the requests did not alternate", a.count(), b.count())
			}
			// The upstream saw one session, its own id, from both replicas.
			_, _, sessions := log.snapshot()
			upSID := ""
			for _, s := range sessions {
				if s == "" {
					continue
				}
				if upSID == "" {
					upSID = s
				}
				if s != upSID {
					t.Fatalf("upstream saw sessions %q and %q; want one", upSID, s)
				}
			}
			if upSID == "" || upSID == cs.ID() {
				t.Fatalf("upstream session %q, client session %q: want the upstream's own id upstream", upSID, cs.ID())
			}
			// Both traces record the session under the upstream's id.
			for name, rp := range map[string]*replica{"A": a, "B": b} {
				n := 0
				for _, rec := range rp.store.Records() {
					if rec.SessionID == upSID {
						n++
					}
				}
				if n < 4 {
					t.Fatalf("replica %s recorded %d records of session %q", name, n, upSID)
				}
			}
		})
	}
}

// sessionPost POSTs one JSON-RPC message to base+path with the session id and
// the caller's tenant.
func sessionPost(t *testing.T, base, path, sid, tenant, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	req.Header.Set("X-Tenant", tenant)
	req.Header.Set("X-Caller", "ci")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
const listBody = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`

// forgeID builds an id as internal/sealid documents its format, with the
// issue time given: a check of the wire format, and the too-old case.
func forgeID(t *testing.T, key []byte, b sealid.Binding, issued time.Time, fields ...string) string {
	t.Helper()
	blk, _ := aes.NewCipher(key)
	gcm, _ := cipher.NewGCM(blk)
	ad := append([]byte("warden-sealid"), sealid.Version)
	for _, f := range []string{b.Kind, b.Server, b.Tenant, b.Caller} {
		ad = binary.AppendUvarint(ad, uint64(len(f)))
		ad = append(ad, f...)
	}
	plain := binary.BigEndian.AppendUint64(nil, uint64(issued.Unix()))
	for _, f := range fields {
		plain = binary.AppendUvarint(plain, uint64(len(f)))
		plain = append(plain, f...)
	}
	nonce := bytes.Repeat([]byte{7}, 12)
	out := append([]byte{sealid.Version}, nonce...)
	return base64.RawURLEncoding.EncodeToString(gcm.Seal(out, nonce, plain, ad))
}

// TestSessionIDRefused: an id that does not open on this replica is
// answered 404 (the client must initialize again) and never reaches the
// upstream.
func TestSessionIDRefused(t *testing.T) {
	srv, _ := mcpserver.New()
	log := &upstreamLog{}
	up := httptest.NewServer(log.wrap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{JSONResponse: true})))
	t.Cleanup(up.Close)
	a := startReplica(t, up.URL, fleetSealer(t, fleetKey))
	b := startReplica(t, up.URL, fleetSealer(t, fleetKey))
	foreign := startReplica(t, up.URL, fleetSealer(t, bytes.Repeat([]byte{1}, sealid.KeySize)))

	resp := sessionPost(t, a.url, "/mcp/test", "", "acme", initBody)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	_, _, sessions := log.snapshot()
	var upSID string
	for _, s := range sessions {
		if s != "" {
			upSID = s
		}
	}
	if r := sessionPost(t, b.url, "/mcp/test", sid, "acme", listBody); r.StatusCode != 200 {
		t.Fatalf("the other replica refused a good id: %d", r.StatusCode)
	}
	_, _, sessions = log.snapshot()
	if upSID = sessions[len(sessions)-1]; upSID == "" || upSID == sid {
		t.Fatalf("upstream saw %q for client id %q", upSID, sid)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(sid)
	flip := func(i int) string {
		c := bytes.Clone(raw)
		c[i] ^= 0x80
		return base64.RawURLEncoding.EncodeToString(c)
	}
	bind := sealid.Binding{Kind: SessionKind, Server: "test", Tenant: "acme", Caller: "ci"}
	if r := sessionPost(t, b.url, "/mcp/test", forgeID(t, fleetKey, bind, time.Now(), upSID, "2025-06-18"), "acme", listBody); r.StatusCode != 200 {
		t.Fatalf("an id built to the documented format was refused (%d): the wire format changed", r.StatusCode)
	}
	cases := []struct {
		name, base, path, sid, tenant string
	}{
		{"version byte flipped", b.url, "/mcp/test", flip(0), "acme"},
		{"nonce bit flipped", b.url, "/mcp/test", flip(3), "acme"},
		{"ciphertext bit flipped", b.url, "/mcp/test", flip(len(raw) - 20), "acme"},
		{"tag bit flipped", b.url, "/mcp/test", flip(len(raw) - 1), "acme"},
		{"truncated", b.url, "/mcp/test", sid[:len(sid)-6], "acme"},
		{"the upstream's own id", b.url, "/mcp/test", upSID, "acme"},
		{"other key", foreign.url, "/mcp/test", sid, "acme"},
		{"other server", b.url, "/mcp/other", sid, "acme"},
		{"other tenant", b.url, "/mcp/test", sid, "globex"},
		{"too old", b.url, "/mcp/test", forgeID(t, fleetKey, bind, time.Now().Add(-2*time.Hour), upSID, "2025-06-18"), "acme"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, s0 := log.snapshot()
			before := len(s0)
			for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
				var r *http.Response
				if method == http.MethodPost {
					r = sessionPost(t, c.base, c.path, c.sid, c.tenant, listBody)
				} else {
					req, _ := http.NewRequest(method, c.base+c.path, nil)
					req.Header.Set("Mcp-Session-Id", c.sid)
					req.Header.Set("X-Tenant", c.tenant)
					req.Header.Set("X-Caller", "ci")
					var err error
					if r, err = http.DefaultClient.Do(req); err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { r.Body.Close() })
				}
				body, _ := io.ReadAll(r.Body)
				if r.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "session not found") {
					t.Fatalf("%s: %d %s; want 404 session not found", method, r.StatusCode, body)
				}
				if r.Header.Get("Mcp-Session-Id") != "" {
					t.Fatalf("%s: a refusal carries a session id", method)
				}
			}
			if _, _, s := log.snapshot(); len(s) != before {
				t.Fatalf("a refused id reached the upstream: %q", s[before:])
			}
		})
	}
}

// BenchmarkSessionOpen is the cost the sealed session adds to a request: one
// open of the client's id.
func BenchmarkSessionOpen(b *testing.B) {
	s := fleetSealer(b, fleetKey)
	bind := sealid.Binding{Kind: SessionKind, Server: "test", Tenant: "acme", Caller: "ci"}
	id, _ := s.SealStrings(bind, "PEUR6LRQKBAUVRCPIZAUOJ63GX", "2025-06-18")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.OpenStrings(bind, id, 2); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLongUpstreamSessionID: an upstream id too long to seal is not handed
// on (and never handed on unsealed).
func TestLongUpstreamSessionID(t *testing.T) {
	long := strings.Repeat("s", MaxUpstreamSessionID+1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Mcp-Session-Id", long)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)
	}))
	t.Cleanup(up.Close)
	a := startReplica(t, up.URL, fleetSealer(t, fleetKey))
	r := sessionPost(t, a.url, "/mcp/test", "", "acme", initBody)
	if r.StatusCode != 200 || r.Header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("%d, session %q; want 200 and no session id", r.StatusCode, r.Header.Get("Mcp-Session-Id"))
	}
}
