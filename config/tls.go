package config

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// TLS is the tls: section: the server's certificate and key (PEM files) and,
// optionally, the CA that verifies client certificates (mTLS: a verified
// subject named in auth.clients gets that entry's scopes). Paths are
// relative to the config file.
type TLS struct {
	Cert, Key, ClientCA string
}

// Enabled reports whether warden serves HTTPS.
func (t TLS) Enabled() bool { return t.Cert != "" }

// Config loads the files into a server tls.Config: TLS 1.2 at least; with a
// client CA, a client certificate is verified when one is sent (a token may
// stand in for it), and an unverifiable one fails the handshake.
func (t TLS) Config() (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(t.Cert, t.Key)
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	c := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if t.ClientCA != "" {
		pem, err := os.ReadFile(t.ClientCA)
		if err != nil {
			return nil, fmt.Errorf("tls.client_ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls.client_ca: %s holds no PEM certificate", t.ClientCA)
		}
		c.ClientCAs, c.ClientAuth = pool, tls.VerifyClientCertIfGiven
	}
	return c, nil
}

// parseTLS reads tls: {cert, key, client_ca}.
func parseTLS(file string, v *yaml.Node) (TLS, ErrorList) {
	var errs ErrorList
	add := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, Error{File: file, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
	}
	var t TLS
	if v.Kind != yaml.MappingNode {
		add(v, "tls: expected {cert, key, client_ca}")
		return t, errs
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		if val.Kind != yaml.ScalarNode || val.Value == "" {
			add(val, "tls.%s: expected a file path", k.Value)
			continue
		}
		p := val.Value
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(file), p)
		}
		switch k.Value {
		case "cert":
			t.Cert = p
		case "key":
			t.Key = p
		case "client_ca":
			t.ClientCA = p
		default:
			add(k, "tls: unknown key %q (want cert, key, client_ca)", k.Value)
		}
	}
	if (t.Cert == "") != (t.Key == "") {
		add(v, "tls: cert and key go together")
	}
	if t.ClientCA != "" && t.Cert == "" {
		add(v, "tls.client_ca: needs cert and key (client certificates are checked in the TLS handshake)")
	}
	return t, errs
}
