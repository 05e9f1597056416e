package acs

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/cloudflare/circl/sign"
	"github.com/cloudflare/circl/sign/mldsa/mldsa65"
	"github.com/cloudflare/circl/sign/slhdsa"

	"github.com/wardenhq/warden/internal/acsclient"
	"github.com/wardenhq/warden/sigkey"
)

// cryptoParty is one side's keys for an ACS-Crypto test: warden's own
// (sigkey) and a client's (generated with circl directly), each side
// holding only the other's public key.
type cryptoParty struct {
	server      *sigkey.PrivateKey
	serverPub   sign.PublicKey // warden's public key as the client holds it
	client      sign.PrivateKey
	clientPub   *sigkey.PublicKey // the client's public key as warden holds it
	clientKeyID string
}

func newCryptoParty(t testing.TB, alg sigkey.Alg) *cryptoParty {
	t.Helper()
	p := &cryptoParty{clientKeyID: "agent-key"}
	var err error
	if p.server, err = sigkey.Generate(alg, nil); err != nil {
		t.Fatal(err)
	}
	scheme := acsclient.SchemeOf(alg.ACSName())
	if p.serverPub, err = scheme.UnmarshalBinaryPublicKey(p.server.Public().Bytes()); err != nil {
		t.Fatal(err)
	}
	var pub sign.PublicKey
	switch alg {
	case sigkey.MLDSA65:
		pk, sk, err := mldsa65.GenerateKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		pub, p.client = pk, sk
	case sigkey.SLHDSA128s:
		pk, sk, err := slhdsa.GenerateKey(nil, slhdsa.SHA2_128s)
		if err != nil {
			t.Fatal(err)
		}
		pub, p.client = pk, sk
	}
	raw, _ := pub.MarshalBinary()
	if p.clientPub, err = sigkey.NewPublicKey(alg, raw); err != nil {
		t.Fatal(err)
	}
	return p
}

// cryptoServer is an HTTP Guardian signing with p.server and verifying
// p.clientPub; keys are the HMAC keys it also has (nil: none).
func cryptoServer(t testing.TB, p *cryptoParty, keys map[string][]byte) (*fixture, *httptest.Server) {
	f := newFixture(t, func(o *Options) {
		o.Keys = keys
		o.SigningKey = p.server
		o.PublicKeys = map[string]*sigkey.PublicKey{p.clientKeyID: p.clientPub}
	})
	srv := httptest.NewServer(f.h)
	t.Cleanup(srv.Close)
	return f, srv
}

// TestCryptoEndToEnd: a client signing with circl, a Guardian signing with
// its ML-DSA-65 (or SLH-DSA-128s) key; every answer verifies with circl
// under the Guardian's public key alone, and the ServerHello lists exactly
// the configured algorithm.
func TestCryptoEndToEnd(t *testing.T) {
	for _, alg := range []sigkey.Alg{sigkey.MLDSA65, sigkey.SLHDSA128s} {
		t.Run(string(alg), func(t *testing.T) {
			if alg == sigkey.SLHDSA128s && testing.Short() {
				t.Skip("SLH-DSA-128s signing is slow")
			}
			p := newCryptoParty(t, alg)
			f, srv := cryptoServer(t, p, nil)
			c := acsclient.New(acsclient.Options{URL: srv.URL, KeyID: p.clientKeyID, SignKey: p.client,
				GuardianKeys: map[string]sign.PublicKey{p.server.KeyID(): p.serverPub},
				Now:          func() time_ { return f.now }})
			ctx := context.Background()
			hello, err := c.Handshake(ctx, []string{"steps/toolCallRequest"})
			if err != nil || hello.Error != nil {
				t.Fatalf("handshake: %v %s", err, hello.Raw)
			}
			if err := c.VerifyResponse(hello); err != nil {
				t.Fatalf("ServerHello: %v", err)
			}
			if got := strings_(hello.Result["signature_algorithms_supported"]); !slices.Equal(got, []string{alg.ACSName()}) {
				t.Errorf("signature_algorithms_supported = %v, want [%s]", got, alg.ACSName())
			}
			sig, _ := hello.Result["signature"].(map[string]any)
			if sig["algorithm"] != alg.ACSName() || sig["key_id"] != p.server.KeyID() {
				t.Errorf("signature envelope %v", sig)
			}
			cmds := []struct{ cmd, want string }{{"ls", "allow"}, {"rm -rf /", "deny"}}
			if alg == sigkey.SLHDSA128s {
				cmds = cmds[:1]
			}
			for _, tc := range cmds {
				r, err := c.Call(ctx, "steps/toolCallRequest", toolCall("Bash", map[string]any{"command": tc.cmd}))
				if err != nil || r.Decision() != tc.want {
					t.Fatalf("%s: %v %s", tc.cmd, err, r.Raw)
				}
				if err := c.VerifyResponse(r); err != nil {
					t.Fatalf("%s: %v", tc.cmd, err)
				}
				// An answer changed in transit no longer verifies.
				r.Result["decision"] = "allow"
				r.Result["reasoning"] = "forged"
				if err := c.VerifyResponse(r); err == nil || !strings.Contains(err.Error(), "does not verify") {
					t.Errorf("%s: a forged answer verifies: %v", tc.cmd, err)
				}
			}
		})
	}
}

// TestCryptoRequestRefusals: a request whose asymmetric signature does not
// hold is refused with -32004 naming the field.
func TestCryptoRequestRefusals(t *testing.T) {
	p := newCryptoParty(t, sigkey.MLDSA65)
	f, srv := cryptoServer(t, p, map[string][]byte{"k1": testKey})
	other := newCryptoParty(t, sigkey.MLDSA65)
	opts := acsclient.Options{URL: srv.URL, KeyID: p.clientKeyID, SignKey: p.client,
		GuardianKeys: map[string]sign.PublicKey{p.server.KeyID(): p.serverPub}, Now: func() time_ { return f.now }}
	ctx := context.Background()
	c := acsclient.New(opts)
	hello, err := c.Handshake(ctx, []string{"steps/toolCallRequest"})
	if err != nil || hello.Error != nil {
		t.Fatalf("handshake: %v %s", err, hello.Raw)
	}
	if got := strings_(hello.Result["signature_algorithms_supported"]); !slices.Equal(got, []string{AlgHMAC, "ML-DSA-65"}) {
		t.Errorf("signature_algorithms_supported = %v", got)
	}
	step := toolCall("Bash", map[string]any{"command": "ls"})
	for _, tc := range []struct {
		name  string
		env   func() *acsclient.Envelope
		field string
	}{
		{"edited after signing", func() *acsclient.Envelope {
			e := c.Request("steps/toolCallRequest", step)
			e.Params["payload"] = toolCall("Bash", map[string]any{"command": "rm -rf /"})
			return e
		}, "params.signature.value"},
		{"signed by another key", func() *acsclient.Envelope {
			e := c.Request("steps/toolCallRequest", step)
			e.SignKey = other.client
			if err := e.Sign(); err != nil {
				t.Fatal(err)
			}
			return e
		}, "params.signature.value"},
		{"unknown key id", func() *acsclient.Envelope {
			e := c.Request("steps/toolCallRequest", step)
			e.KeyID = "nobody"
			if err := e.Sign(); err != nil {
				t.Fatal(err)
			}
			return e
		}, "params.signature.key_id"},
		{"algorithm not the key's", func() *acsclient.Envelope {
			e := c.Request("steps/toolCallRequest", step)
			e.Params["signature"].(map[string]any)["algorithm"] = "SLH-DSA-128s"
			return e
		}, "params.signature.algorithm"},
		{"value not base64", func() *acsclient.Envelope {
			e := c.Request("steps/toolCallRequest", step)
			e.Params["signature"].(map[string]any)["value"] = "***"
			return e
		}, "params.signature.value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := c.Send(ctx, tc.env())
			if err != nil {
				t.Fatal(err)
			}
			data, _ := r.Error.Data.(map[string]any)
			if r.ErrorCode() != CodeSignatureInvalid || data["field"] != tc.field {
				t.Fatalf("got %s, want -32004 on %s", r.Raw, tc.field)
			}
		})
	}
	// An HMAC-signed session on the same Guardian: its answers carry
	// warden's ML-DSA-65 signature instead.
	hc := acsclient.New(acsclient.Options{URL: srv.URL, KeyID: "k1", Key: testKey,
		GuardianKeys: map[string]sign.PublicKey{p.server.KeyID(): p.serverPub}, Now: func() time_ { return f.now }})
	if r, err := hc.Handshake(ctx, []string{"steps/toolCallRequest"}); err != nil || r.Error != nil || hc.VerifyResponse(r) != nil {
		t.Fatalf("HMAC handshake: %v %s %v", err, r.Raw, hc.VerifyResponse(r))
	}
	r, err := hc.Call(ctx, "steps/toolCallRequest", step)
	if err != nil || r.Decision() != "allow" || hc.VerifyResponse(r) != nil {
		t.Fatalf("HMAC step: %v %s %v", err, r.Raw, hc.VerifyResponse(r))
	}
}

func TestCryptoOptionErrors(t *testing.T) {
	p := newCryptoParty(t, sigkey.MLDSA65)
	store := newFixture(t, nil).store
	_, err := NewHandler(nil, Options{Sessions: store, PublicKeys: map[string]*sigkey.PublicKey{"a": p.clientPub}})
	if err == nil || !strings.Contains(err.Error(), "acs.public_keys needs acs.signing_key") {
		t.Errorf("public keys without a signing key: %v", err)
	}
	_, err = NewHandler(nil, Options{Sessions: store, RequireSignatures: true})
	if err == nil || !strings.Contains(err.Error(), "acs.keys or acs.public_keys") {
		t.Errorf("require without keys: %v", err)
	}
	// With only a signing key (no client keys), requests are not
	// authenticated but every answer is signed; the ServerHello says so.
	f := newFixture(t, func(o *Options) { o.Keys, o.RequireSignatures, o.SigningKey = nil, false, p.server })
	s := f.session()
	s.keyID = ""
	r := s.call(MethodHello, helloPayload("steps/toolCallRequest"))
	res, _ := r["result"].(map[string]any)
	if got := strings_(res["signature_algorithms_supported"]); !slices.Equal(got, []string{"ML-DSA-65"}) {
		t.Errorf("signature_algorithms_supported = %v", got)
	}
	if sig, _ := res["signature"].(map[string]any); sig["algorithm"] != "ML-DSA-65" {
		t.Errorf("unsigned request's answer: signature %v", sig)
	}
}

// BenchmarkStepMLDSA is BenchmarkStep with ML-DSA-65 on both sides: the
// request verified under the client's public key, the answer signed with
// warden's key.
func BenchmarkStepMLDSA(b *testing.B) {
	p := newCryptoParty(b, sigkey.MLDSA65)
	f := newFixture(b, func(o *Options) {
		o.Keys, o.SigningKey = nil, p.server
		o.PublicKeys = map[string]*sigkey.PublicKey{p.clientKeyID: p.clientPub}
	})
	c := acsclient.NewWithTransport(handlerTransport{f.h}, acsclient.Options{KeyID: p.clientKeyID, SignKey: p.client, Now: func() time_ { return f.now }})
	ctx := context.Background()
	if r, err := c.Handshake(ctx, []string{"steps/toolCallRequest"}); err != nil || r.Error != nil {
		b.Fatalf("handshake: %v %s", err, r.Raw)
	}
	bodies := make([][]byte, b.N)
	for i := range bodies {
		e := c.Request("steps/toolCallRequest", toolCall("search", map[string]any{"q": "weather in Barcelona", "limit": 10}))
		var err error
		if bodies[i], err = json.Marshal(e); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		out := f.h.Handle(ctx, bodies[i], "http")
		if !bytes.Contains(out, []byte(`"algorithm":"ML-DSA-65"`)) || bytes.Contains(out, []byte(`"error"`)) {
			b.Fatalf("%s", out)
		}
	}
}

// handlerTransport sends a client's requests straight to a Handler.
type handlerTransport struct{ h *Handler }

func (t handlerTransport) RoundTrip(ctx context.Context, body []byte) ([]byte, int, error) {
	return t.h.Handle(ctx, body, "http"), 200, nil
}

func (handlerTransport) Name() string { return "http" }
