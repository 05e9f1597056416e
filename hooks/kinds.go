package hooks

import (
	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/aosclient"
	"github.com/wardenhq/warden/command"
	"github.com/wardenhq/warden/webhook"
)

// builder makes the handler of one validated declaration of its kind
// (policy declarations place the engine and have no builder).
type builder func(d Decl) (warden.Handler, error)

// builders are the handler kinds that call out, by kind: a new kind (an
// approval, gRPC or ACS guardian) adds its constructor here and nowhere else.
var builders = map[string]builder{
	KindCommand: func(d Decl) (warden.Handler, error) {
		c, err := command.New(command.Config{Argv: d.Command, Timeout: d.Timeout, MaxProcs: d.MaxProcs})
		if err != nil {
			return nil, err
		}
		return &patchHandler{name: d.Name, kind: d.Kind, run: c}, nil
	},
	KindWebhook: func(d Decl) (warden.Handler, error) {
		w, err := webhook.New(webhook.Config{URL: d.URL, Headers: d.Headers, Timeout: d.Timeout}, nil)
		if err != nil {
			return nil, err
		}
		return &patchHandler{name: d.Name, kind: d.Kind, run: w}, nil
	},
	KindAOS: func(d Decl) (warden.Handler, error) {
		c, err := aosclient.New(aosclient.Config{URL: d.URL, Headers: d.Headers, Timeout: d.Timeout}, nil)
		if err != nil {
			return nil, err
		}
		return c, nil
	},
}
