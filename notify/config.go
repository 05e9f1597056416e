package notify

import "github.com/wardenhq/warden/conf"

// Channels is the approvals.notify list of the config (docs/approvals.md):
// whom to tell about each new approval.
type Channels []Channel

// Channel is one entry of approvals.notify. A webhook is the only kind.
type Channel struct {
	Webhook *Webhook `yaml:"webhook" conf:"required"`
}

// Webhook is a Target as the config writes it: {url, format, headers},
// ${VAR}s expanded. It is a type of its own so that its Target checks run
// once it decoded (Channel.Validate), not again over a url that failed.
type Webhook struct {
	URL     string            `yaml:"url" conf:"env,url,required"`
	Format  string            `yaml:"format" oneof:"json|slack"`
	Headers map[string]string `yaml:"headers" conf:"env"`
}

// String describes w as Target.String does: no header values.
func (w Webhook) String() string { return Target(w).String() }

// GoString masks w for %#v as String does for %v.
func (w Webhook) GoString() string { return w.String() }

// Validate checks the header names and values of a webhook that decoded
// (a nil Webhook failed, and said why).
func (c *Channel) Validate() error {
	if c.Webhook == nil {
		return nil
	}
	if err := Target(*c.Webhook).Validate(); err != nil {
		return conf.Errorf("webhook", "%v", err)
	}
	return nil
}

// Targets are the webhooks of cs, Format "" made FormatJSON.
func (cs Channels) Targets() []Target {
	var out []Target
	for _, c := range cs {
		if c.Webhook == nil {
			continue
		}
		t := Target(*c.Webhook)
		if t.Format == "" {
			t.Format = FormatJSON
		}
		out = append(out, t)
	}
	return out
}
