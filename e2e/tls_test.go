package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pki is a throwaway CA with a server certificate for 127.0.0.1 and client
// certificates, written as PEM files for `warden serve`.
type pki struct {
	dir    string
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	caPool *x509.CertPool
	serial int64
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "warden test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	p := &pki{dir: t.TempDir(), ca: ca, caKey: key, caPool: x509.NewCertPool(), serial: 1}
	p.caPool.AddCert(ca)
	p.write(t, "ca.pem", "CERTIFICATE", der)
	return p
}

func (p *pki) write(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// issue signs a certificate for subject cn; server ones are for 127.0.0.1.
func (p *pki) issue(t *testing.T, cn string, server bool) (certFile, keyFile string, pair tls.Certificate) {
	t.Helper()
	p.serial++
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tpl := &x509.Certificate{SerialNumber: big.NewInt(p.serial), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
	if server {
		tpl.ExtKeyUsage, tpl.IPAddresses = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, []net.IP{net.ParseIP("127.0.0.1")}
	} else {
		tpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = p.write(t, cn+".pem", "CERTIFICATE", der), p.write(t, cn+".key", "EC PRIVATE KEY", kder)
	pair, err = tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, pair
}

// TestServeTLSClientCertificates: warden serves HTTPS with tls: {cert, key,
// client_ca}; a client certificate the CA verified, whose subject
// auth.clients names, decides with that entry's scopes and is recorded as
// the caller; no certificate and no token is 401; a certificate with only
// the read scope cannot decide (403); a certificate from another CA fails
// the handshake; plain HTTP gets no answer.
func TestServeTLSClientCertificates(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: builds and runs the warden binary; skipped with -short")
	}
	bin := wardenBinary(t)
	p := newPKI(t)
	srvCert, srvKey, _ := p.issue(t, "warden", true)
	_, _, agent := p.issue(t, "payments-agent", false)
	_, _, viewer := p.issue(t, "dashboard", false)
	other := newPKI(t)
	_, _, stranger := other.issue(t, "payments-agent", false)

	cfg := filepath.Join(p.dir, "warden.yaml")
	body := "tls: {cert: " + srvCert + ", key: " + srvKey + ", client_ca: " + filepath.Join(p.dir, "ca.pem") + "}\n" +
		"auth:\n  clients:\n    - {subject: \"CN=payments-agent\", scopes: [decide], tenant: acme}\n    - {subject: \"CN=dashboard\", scopes: [read]}\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "data")
	s := startServer(t, bin, "--config", cfg, "--data", data)
	if !strings.HasPrefix(s.url, "https://") {
		t.Fatalf("listening on %s, want https", s.url)
	}
	client := func(certs ...tls.Certificate) *http.Client {
		return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: p.caPool, Certificates: certs, MinVersion: tls.VersionTLS12}}}
	}
	decide := func(c *http.Client) (int, string) {
		req := `{"jsonrpc":"2.0","id":1,"method":"steps/message","params":{"message":{"role":"user","id":"m","content":[{"kind":"text","text":"hello"}]},"context":{"session":{"id":"tls"}}}}`
		resp, err := c.Post(s.url+"/aos", "application/json", strings.NewReader(req))
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return resp.StatusCode, string(b)
	}
	if code, out := decide(client(agent)); code != 200 || !strings.Contains(out, `"decision":"allow"`) {
		t.Fatalf("client certificate payments-agent: %d %s", code, out)
	}
	if code, out := decide(client()); code != 401 {
		t.Fatalf("no certificate, no token: %d %s, want 401", code, out)
	}
	if code, out := decide(client(viewer)); code != 403 {
		t.Fatalf("read-only certificate deciding: %d %s, want 403", code, out)
	}
	if code, out := decide(client(stranger)); code != 0 {
		t.Fatalf("certificate of another CA: %d %s, want a failed handshake", code, out)
	}
	plain := &http.Client{Timeout: 3 * time.Second}
	if resp, err := plain.Get("http" + strings.TrimPrefix(s.url, "https") + "/healthz"); err == nil && resp.StatusCode == 200 {
		t.Fatal("plain HTTP was answered on the TLS listener")
	}
	// The decision is recorded under the certificate's subject and tenant.
	resp, err := client(viewer).Get(s.url + "/api/hooks/runs?session=tls")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var recs []struct{ Caller, Tenant string }
	if err := json.NewDecoder(resp.Body).Decode(&recs); err != nil || len(recs) != 1 || recs[0].Caller != "CN=payments-agent" || recs[0].Tenant != "acme" {
		t.Fatalf("records %+v (%v)", recs, err)
	}
}
