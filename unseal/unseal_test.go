package unseal_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/redact"
	"github.com/wardenhq/warden/seal/sealtest"
	"github.com/wardenhq/warden/storetest"
	"github.com/wardenhq/warden/unseal"
)

func newService(t *testing.T) (*unseal.Service, *storetest.Mem, audit.RecordFilter) {
	t.Helper()
	s := sealtest.NewSealer(t)
	trace := storetest.NewMem()
	return unseal.New(s, trace), trace, redact.New(make([]byte, redact.KeySize)).RecordFilter(s)
}

// stored records a step that sent mail to bob, as the pipeline does.
func stored(t *testing.T, f audit.RecordFilter, trace audit.Store, id, tenant, session string) *audit.Record {
	t.Helper()
	rec := &audit.Record{ID: id, Time: time.Now().UTC(), Tenant: tenant, SessionID: session, Event: "steps/toolCallRequest",
		Surface: "aos", Decision: "ask", Input: json.RawMessage(`{"tool":"send_email","to":"bob@external.example"}`)}
	if err := f(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Sealed) == 0 || strings.Contains(string(rec.Input), "bob@") {
		t.Fatalf("not redacted and sealed: %s / %s", rec.Input, rec.Sealed)
	}
	if err := trace.Record(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// unseals returns the unseal and forget records of the trace, oldest first.
func unseals(t *testing.T, trace audit.Store) []audit.Record {
	t.Helper()
	recs, err := audit.Collect(context.Background(), trace, audit.Query{Surface: unseal.Surface, Oldest: true}, 100)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestReveal(t *testing.T) {
	svc, trace, f := newService(t)
	ctx := context.Background()
	rec := stored(t, f, trace, "r1", "acme", "s1")
	v := unseal.Viewer{Name: "dana", Tenant: "acme", From: "192.0.2.7:5000", Via: "api"}
	got, opened, err := svc.Reveal(ctx, v, rec)
	if err != nil || opened.Erased != 0 || !strings.Contains(string(got.Input), `"to":"bob@external.example"`) {
		t.Fatalf("Reveal: %s, %+v, %v", got.Input, opened, err)
	}
	if strings.Contains(string(rec.Input), "bob@") {
		t.Error("Reveal changed the stored record")
	}
	us := unseals(t, trace)
	if len(us) != 1 || us[0].Caller != "dana" || us[0].Tenant != "acme" || us[0].SessionID != "s1" || us[0].Decision != "allow" ||
		!strings.Contains(string(us[0].Input), `"record":"r1"`) || !strings.Contains(string(us[0].Input), `"from":"192.0.2.7:5000"`) ||
		strings.Contains(string(us[0].Input)+us[0].Reason, "bob@") {
		t.Fatalf("unseal records: %+v", us)
	}

	// Another tenant's viewer is refused, and the refusal is recorded
	// under the viewer's tenant without the record's content.
	_, _, err = svc.Reveal(ctx, unseal.Viewer{Name: "mallory", Tenant: "globex", Via: "api"}, rec)
	if !errors.Is(err, unseal.ErrOtherTenant) {
		t.Fatalf("cross-tenant: %v", err)
	}
	us = unseals(t, trace)
	if len(us) != 2 || us[1].Caller != "mallory" || us[1].Tenant != "globex" || us[1].Decision != "deny" ||
		us[1].ReasonCodes[0] != unseal.CodeOtherTenant || us[1].SessionID != "" {
		t.Fatalf("refusal record: %+v", us[1])
	}

	// A viewer of every tenant opens it; a record without sealed values
	// is returned as stored and records nothing.
	if got, _, err := svc.Reveal(ctx, unseal.Viewer{Name: "root", Via: "console"}, rec); err != nil || !strings.Contains(string(got.Input), "bob@") {
		t.Fatalf("global viewer: %v", err)
	}
	plain := &audit.Record{ID: "p", Tenant: "acme", Input: json.RawMessage(`{}`)}
	if got, _, err := svc.Reveal(ctx, v, plain); err != nil || got != plain {
		t.Fatalf("plain record: %v", err)
	}
	if n := len(unseals(t, trace)); n != 3 {
		t.Fatalf("%d unseal records, want 3", n)
	}
	// Another tenant's record without sealed values is refused and
	// recorded too: the attempt is what counts.
	if _, _, err := svc.Reveal(ctx, unseal.Viewer{Name: "mallory", Tenant: "globex"}, plain); !errors.Is(err, unseal.ErrOtherTenant) {
		t.Fatalf("cross-tenant, nothing sealed: %v", err)
	}
	if us := unseals(t, trace); len(us) != 4 || us[3].Decision != "deny" || us[3].Caller != "mallory" {
		t.Fatalf("refusal of a record without sealed values not recorded: %+v", us)
	}
}

func TestForget(t *testing.T) {
	svc, trace, f := newService(t)
	ctx := context.Background()
	a := stored(t, f, trace, "a", "", "s1")
	b := stored(t, f, trace, "b", "", "s2")
	root := unseal.Viewer{Name: "privacy-officer", Via: "cli", From: "cli"}
	if _, err := svc.Forget(ctx, unseal.Viewer{Tenant: "acme"}, "", "s1"); !errors.Is(err, unseal.ErrOtherTenant) {
		t.Fatalf("a tenant forgetting another's session: %v", err)
	}
	n, err := svc.Forget(ctx, root, "", "s1")
	if err != nil || n != 1 {
		t.Fatalf("Forget: %d, %v", n, err)
	}
	got, opened, err := svc.Reveal(ctx, root, a)
	if err != nil || opened.Erased != 1 || strings.Contains(string(got.Input), "bob@") {
		t.Fatalf("after forget: %s %+v %v", got.Input, opened, err)
	}
	if got, _, err := svc.Reveal(ctx, root, b); err != nil || !strings.Contains(string(got.Input), "bob@") {
		t.Fatalf("the other session: %v", err)
	}
	us := unseals(t, trace)
	if len(us) != 2 || us[0].Event != unseal.EventForget || us[0].SessionID != "s1" || us[0].Caller != "privacy-officer" ||
		!strings.Contains(string(us[0].Input), `"keys_destroyed":1`) || us[1].Event != unseal.EventUnseal {
		t.Fatalf("records: %+v", us)
	}
	var none *unseal.Service
	if _, err := none.Forget(ctx, root, "", "s1"); !errors.Is(err, unseal.ErrOff) {
		t.Errorf("nil service: %v", err)
	}
}
