package auth

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"github.com/wardenhq/warden/conf"
)

// TLS is the tls: section: the server's certificate and key (PEM files) and,
// optionally, the CA that verifies client certificates (mTLS: a verified
// subject named in auth.clients gets that entry's scopes). The config
// resolves relative paths against its own directory once decoded.
type TLS struct {
	Cert     string `yaml:"cert"`
	Key      string `yaml:"key"`
	ClientCA string `yaml:"client_ca"`
}

// Validate checks that cert and key go together, and that a client CA has
// a server certificate to go with.
func (t *TLS) Validate() error {
	var errs []error
	if (t.Cert == "") != (t.Key == "") {
		errs = append(errs, conf.Errorf("", "cert and key go together"))
	}
	if t.ClientCA != "" && t.Cert == "" {
		errs = append(errs, conf.Errorf("client_ca", "needs cert and key (client certificates are checked in the TLS handshake)"))
	}
	return errors.Join(errs...)
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
