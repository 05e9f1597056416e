package backend_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/backend"
)

func TestScheme(t *testing.T) {
	for _, tc := range []struct {
		url    string
		scheme string
		ok     bool
	}{
		{"postgres://u@h/db", "postgres", true},
		{"postgresql://h/db", "postgresql", true},
		{"PostgreS://h/db", "postgres", true},
		{"sqlite:./warden-data", "sqlite", true},
		{"sqlite:/var/lib/warden", "sqlite", true},
		{"fake+v2:x", "fake+v2", true},
		{"./warden-data", "", false},
		{"warden-data", "", false},
		{"/var/lib/warden", "", false},
		{"./a:b", "", false},
		{`C:\warden`, "", false},
		{"", "", false},
		{":x", "", false},
		{"2x:y", "", false},
	} {
		got, ok := backend.Scheme(tc.url)
		if got != tc.scheme || ok != tc.ok {
			t.Errorf("Scheme(%q) = %q, %v; want %q, %v", tc.url, got, ok, tc.scheme, tc.ok)
		}
	}
}

// nopStore is a trace and nothing else.
type nopStore struct{}

func (nopStore) Record(context.Context, *audit.Record) error                       { return nil }
func (nopStore) Scan(context.Context, audit.Query, func(*audit.Record) bool) error { return nil }
func (nopStore) Close() error                                                      { return nil }

// readyStore is a trace that can tell whether it is ready.
type readyStore struct{ nopStore }

func (readyStore) Ready(context.Context) error { return nil }

// provider knows its backend.
type provider struct{ nopStore }

func (p provider) Backend() *backend.Backend {
	return &backend.Backend{Name: "fake", Trace: p, Shared: true}
}

func TestOpen(t *testing.T) {
	var got []string
	backend.Register("faketest", func(_ context.Context, url string, opts backend.Options) (*backend.Backend, error) {
		got = append(got, url)
		return &backend.Backend{Name: "fake", Trace: nopStore{}, Redact: opts.ReadOnly}, nil
	})
	b, err := backend.Open(context.Background(), "faketest://x/y", backend.Options{ReadOnly: true})
	if err != nil || b.Name != "fake" || !b.Redact {
		t.Fatalf("Open = %+v, %v", b, err)
	}
	if len(got) != 1 || got[0] != "faketest://x/y" {
		t.Errorf("the driver got %q", got)
	}
	// A directory whose name looks like a URL opens through DirURL.
	if _, err := backend.Open(context.Background(), backend.DirURL("faketest:dir"), backend.Options{}); err == nil ||
		!strings.Contains(err.Error(), "no driver for sqlite:") {
		t.Errorf("Open(DirURL) = %v; want the sqlite driver", err)
	}
	if s := backend.Schemes(); !slices.Contains(s, "faketest") {
		t.Errorf("Schemes() = %q", s)
	}
	for url, want := range map[string]string{
		"nosuch://h/db":  "no driver for nosuch: URLs (import the package of its backend)",
		"postgres://h/d": "no driver for postgres: URLs (import github.com/wardenhq/warden/postgres)",
		"./warden-data":  "no driver for sqlite: URLs (import github.com/wardenhq/warden/sqlite)",
	} {
		if _, err := backend.Open(context.Background(), url, backend.Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%q) = %v; want %q", url, err, want)
		}
	}
}

func TestRegisterTwice(t *testing.T) {
	open := func(context.Context, string, backend.Options) (*backend.Backend, error) { return nil, nil }
	backend.Register("twicetest", open)
	defer func() {
		if recover() == nil {
			t.Error("a second Register did not panic")
		}
	}()
	backend.Register("twicetest", open)
}

func TestOf(t *testing.T) {
	if b := backend.Of(nil); b == nil || b.Trace != nil || b.Labels != nil || b.Redact {
		t.Errorf("Of(nil) = %+v", b)
	}
	b := backend.Of(readyStore{})
	if b.Trace == nil || b.Ready == nil || b.Approvals != nil || b.Labels != nil || b.ACS != nil ||
		b.AgBOM != nil || b.Registry != nil || b.Cursors != nil || b.Pruner != nil || b.Redact || b.Shared {
		t.Errorf("Of(readyStore) = %+v; want the trace and Ready alone", b)
	}
	if b := backend.Of(provider{}); b.Name != "fake" || !b.Shared {
		t.Errorf("Of(provider) = %+v; want its own Backend", b)
	}
}
