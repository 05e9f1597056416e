package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/notify"
)

func TestApprovals(t *testing.T) {
	// want is the section as its users read it: approval's settings and
	// the notify targets.
	type want struct {
		approval.Config
		Notify []notify.Target
	}
	t.Setenv("HOOK_TOKEN", "s3cret")
	t.Setenv("HOOK_HOST", "hooks.example.com")
	tests := []struct {
		name    string
		yaml    string
		want    *want  // nil: only wantErr is checked
		wantErr string // substring of the error, "" for success
	}{
		{name: "defaults", yaml: "", want: &want{Config: approval.Config{Wait: 2 * time.Minute, TTL: 15 * time.Minute}}},
		{name: "empty mapping", yaml: "approvals: {}\n", want: &want{Config: approval.Config{Wait: 2 * time.Minute, TTL: 15 * time.Minute}}},
		{name: "everything", yaml: `approvals:
  wait: 30s
  ttl: 1d
  url: https://warden.example.com/console/
  notify:
    - webhook: {url: "https://${HOOK_HOST}/T000/B000", format: slack, headers: {X-Token: "${HOOK_TOKEN}"}}
    - webhook: {url: "http://127.0.0.1:9100/approvals"}
`, want: &want{Config: approval.Config{Wait: 30 * time.Second, TTL: 24 * time.Hour, URL: "https://warden.example.com/console"},
			Notify: []notify.Target{
				{URL: "https://hooks.example.com/T000/B000", Format: "slack", Headers: map[string]string{"X-Token": "s3cret"}},
				{URL: "http://127.0.0.1:9100/approvals", Format: "json"},
			}}},
		{name: "bounds inclusive", yaml: "approvals: {wait: 15m, ttl: 24h}\n", want: &want{Config: approval.Config{Wait: 15 * time.Minute, TTL: 24 * time.Hour}}},
		{name: "lower bounds inclusive", yaml: "approvals: {wait: 1s, ttl: 1000ms}\n", want: &want{Config: approval.Config{Wait: time.Second, TTL: time.Second}}},

		{name: "not a mapping", yaml: "approvals: 2m\n", wantErr: "w.yaml:1: approvals: expected a mapping with wait, ttl, url, notify"},
		{name: "unknown key", yaml: "approvals:\n  timeout: 2m\n", wantErr: `w.yaml:2: approvals: unknown key "timeout" (want wait, ttl, url, notify)`},
		{name: "wait too long", yaml: "approvals:\n  wait: 20m\n", wantErr: `w.yaml:2: approvals.wait: expected a duration in 1s..15m such as 30s, got "20m"`},
		{name: "wait too short", yaml: "approvals:\n  wait: 500ms\n", wantErr: `w.yaml:2: approvals.wait: expected a duration in 1s..15m such as 30s, got "500ms"`},
		{name: "wait not a duration", yaml: "approvals:\n  wait: soon\n", wantErr: `w.yaml:2: approvals.wait: expected a duration in 1s..15m such as 30s, got "soon"`},
		{name: "wait negative", yaml: "approvals:\n  wait: -1m\n", wantErr: `approvals.wait: expected a duration in 1s..15m such as 30s, got "-1m"`},
		{name: "wait a list", yaml: "approvals:\n  wait: [1m]\n", wantErr: "w.yaml:2: approvals.wait: expected a duration in 1s..15m such as 30s"},
		{name: "ttl too long", yaml: "approvals:\n  ttl: 2d\n", wantErr: `w.yaml:2: approvals.ttl: expected a duration in 1s..24h such as 30s, got "2d"`},
		{name: "ttl zero", yaml: "approvals:\n  ttl: 0s\n", wantErr: `approvals.ttl: expected a duration in 1s..24h such as 30s, got "0s"`},
		{name: "url not http", yaml: "approvals:\n  url: ftp://warden.example.com\n", wantErr: `w.yaml:2: approvals.url: expected an http(s) URL, got "ftp://warden.example.com"`},
		{name: "url without host", yaml: "approvals:\n  url: /console\n", wantErr: `approvals.url: expected an http(s) URL, got "/console"`},
		{name: "url with query", yaml: "approvals:\n  url: https://w.example.com/?a=1\n", wantErr: "approvals.url: expected a base URL without user info, query or fragment"},
		{name: "url unset variable", yaml: "approvals:\n  url: ${NO_SUCH_WARDEN_VAR}\n", wantErr: "w.yaml:2: approvals.url: environment variable NO_SUCH_WARDEN_VAR is not set"},
		{name: "notify not a list", yaml: "approvals:\n  notify: {webhook: {url: http://h}}\n", wantErr: "w.yaml:2: approvals.notify: expected a list"},
		{name: "notify entry not a mapping", yaml: "approvals:\n  notify:\n    - http://h\n", wantErr: "w.yaml:3: approvals.notify[0]: expected a mapping with webhook"},
		{name: "notify unknown kind", yaml: "approvals:\n  notify:\n    - email: {to: a@b}\n", wantErr: `w.yaml:3: approvals.notify[0]: unknown key "email" (want webhook)`},
		{name: "webhook unknown key", yaml: "approvals:\n  notify:\n    - webhook:\n        url: http://h\n        fromat: slack\n", wantErr: `w.yaml:5: approvals.notify[0].webhook: unknown key "fromat" (want url, format, headers)`},
		{name: "webhook not a mapping", yaml: "approvals:\n  notify:\n    - webhook: http://h\n", wantErr: "w.yaml:3: approvals.notify[0].webhook: expected a mapping with url, format, headers"},
		{name: "notify entry empty", yaml: "approvals:\n  notify:\n    - {}\n", wantErr: "w.yaml:3: approvals.notify[0]: missing webhook"},
		{name: "webhook missing url", yaml: "approvals:\n  notify:\n    - webhook: {format: slack}\n", wantErr: "w.yaml:3: approvals.notify[0].webhook: missing url"},
		{name: "webhook bad url", yaml: "approvals:\n  notify:\n    - webhook: {url: \"hooks.example.com/x\"}\n", wantErr: `approvals.notify[0].webhook.url: expected an http(s) URL, got "hooks.example.com/x"`},
		{name: "webhook url unset variable", yaml: "approvals:\n  notify:\n    - webhook: {url: \"https://h/${NO_SUCH_WARDEN_VAR}\"}\n", wantErr: "approvals.notify[0].webhook.url: environment variable NO_SUCH_WARDEN_VAR is not set"},
		{name: "webhook bad format", yaml: "approvals:\n  notify:\n    - webhook: {url: http://h, format: teams}\n", wantErr: `w.yaml:3: approvals.notify[0].webhook.format: expected json or slack, got "teams"`},
		{name: "webhook header unset variable", yaml: "approvals:\n  notify:\n    - webhook: {url: http://h}\n    - webhook: {url: http://h, headers: {Authorization: \"Bearer ${NO_SUCH_WARDEN_VAR}\"}}\n", wantErr: "w.yaml:4: approvals.notify[1].webhook.headers.Authorization: environment variable NO_SUCH_WARDEN_VAR is not set"},
		{name: "webhook headers not a mapping", yaml: "approvals:\n  notify:\n    - webhook: {url: http://h, headers: [a]}\n", wantErr: "approvals.notify[0].webhook.headers: expected a mapping"},
		{name: "webhook header value not a string", yaml: "approvals:\n  notify:\n    - webhook: {url: http://h, headers: {X-A: {b: c}}}\n", wantErr: "approvals.notify[0].webhook.headers.X-A: expected a string"},
		{name: "webhook bad header name", yaml: "approvals:\n  notify:\n    - webhook: {url: http://h, headers: {\"X Token\": a}}\n", wantErr: `w.yaml:3: approvals.notify[0].webhook: webhook http://h: header name "X Token" is not a valid HTTP token`},
		{name: "top-level list names approvals", yaml: "approval: {}\n", wantErr: "tenants, trace, tls, approvals, acs, otel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("w.yaml", []byte(tt.yaml))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Fatalf("error shows a header value: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := want{Config: c.Approvals.Config, Notify: c.Approvals.Notify.Targets()}
			if !reflect.DeepEqual(got, *tt.want) {
				t.Fatalf("got  %#v\nwant %#v", got, *tt.want)
			}
		})
	}
}

func TestDefaultApprovals(t *testing.T) {
	if a := Default().Approvals; a.Wait != approval.DefaultWait || a.TTL != approval.DefaultTTL || a.URL != "" || a.Notify != nil {
		t.Fatalf("%+v", a)
	}
}
