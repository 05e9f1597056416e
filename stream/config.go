package stream

import (
	"errors"
	"net/url"
	"time"

	"github.com/wardenhq/warden/conf"
)

// Config is the config's stream: section (docs/scaling.md): where the
// decision stream is published. Without a stream.nats url it publishes
// none.
type Config struct {
	NATS NATS `yaml:"nats"`
}

// NATS is stream.nats: the JetStream stream the trace is published to
// (Options), its keys' defaults those of Options.
type NATS struct {
	// URL is the NATS server, nats:// or tls:// (stream.nats.url,
	// required); "" means no stream. It may name ${ENV} variables and hold
	// credentials: it is never logged.
	URL string `yaml:"url" conf:"env,required"`
	// Stream is the JetStream stream, created if absent (DefaultStream).
	Stream string `yaml:"stream"`
	// Subject prefixes the records' subjects (DefaultSubject):
	// <subject>.<tenant or _>.<surface>.<decision>.
	Subject string `yaml:"subject"`
	// Batch bounds the records read and awaiting acknowledgement at once
	// (DefaultBatch, at most 4096).
	Batch int `yaml:"batch" range:"1..4096"`
	// Poll is how often an idle publisher looks for new records
	// (DefaultPoll).
	Poll time.Duration `yaml:"poll" range:"10ms..1m"`
	// Timeout bounds connecting and each batch's acknowledgements
	// (DefaultTimeout).
	Timeout time.Duration `yaml:"timeout" range:"100ms..5m"`
}

// DefaultConfig is the stream section of a config without one: the
// defaults, no URL.
func DefaultConfig() Config {
	return Config{NATS: NATS{Stream: DefaultStream, Subject: DefaultSubject, Batch: DefaultBatch,
		Poll: DefaultPoll, Timeout: DefaultTimeout}}
}

// Enabled reports whether the decision stream is published.
func (n NATS) Enabled() bool { return n.URL != "" }

// Validate checks the URL's scheme and the stream and subject names.
func (n *NATS) Validate() error {
	var errs []error
	if n.URL != "" {
		// The URL is not quoted: it may hold credentials.
		if u, err := url.Parse(n.URL); err != nil || (u.Scheme != "nats" && u.Scheme != "tls") || u.Host == "" {
			errs = append(errs, conf.Errorf("url", "expected a nats:// or tls:// URL such as nats://127.0.0.1:4222"))
		}
	}
	if ValidStreamName(n.Stream) != nil {
		errs = append(errs, conf.Errorf("stream", "%q: a JetStream stream name holds letters, digits, '-' and '_'", n.Stream))
	}
	if ValidSubject(n.Subject) != nil {
		errs = append(errs, conf.Errorf("subject", "%q: expected tokens separated by '.', without wildcards or white space", n.Subject))
	}
	return errors.Join(errs...)
}
