package redact

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/seal"
	"github.com/wardenhq/warden/seal/sealtest"
)

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

// What the redaction replaced is what Reveal puts back: for each input
// of TestJSON's kinds, filter, seal, open and reveal give the input again,
// and the stored record holds no original.
func TestSealRevealRoundTrip(t *testing.T) {
	r := New([]byte("0123456789abcdef0123456789abcdef"))
	s := sealtest.NewSealer(t)
	ctx := context.Background()
	inputs := []string{
		`{"body":"aws_access_key_id=AKIAIOSFODNN7EXAMPLE","n":1}`,
		`{"body":"key \"AKIAIOSFODNN7EXAMPLE\"\n\u0041KIAIOSFODNN7EXAMPLF"}`,
		`{"text":"Your card 4111 1111 1111 1111 is on file."}`,
		`{"alice@example.com":true}`,
		`{"card":4111111111111111,"x":12.5e3,"y":-3}`,
		`[["a@b.example","AKIAIOSFODNN7EXAMPLE"],{"x":{"y":"ghp_0123456789abcdefghijklmnopqrstuvwxyz"}}]`,
		`{"t":"[REDACTED:x:AKIAIOSFODNN7EXAMPLE]"}`,
		`{"t":"héllo ☃ AKIAIOSFODNN7EXAMPLE \u2028"}`,
		`{"api_key":"Zx8fQ2mP9wLk3Rt7Vb1N","in":[{"value":"p4Ss-W0rd-Xy7Zq9Lk2M","name":"password"}]}`,
		`{"to":"bob@external.example","cc":["bob@external.example","eve@other.example"]}`,
	}
	for i, in := range inputs {
		rec := &audit.Record{ID: "r" + string(rune('a'+i)), Time: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC),
			SessionID: "s1", Reason: "saw AKIAIOSFODNN7EXAMPLE", Input: json.RawMessage(in),
			Results: []warden.Result{{Guardian: "hook", Error: "mail a@b.example", Patch: json.RawMessage(`{"x":"5555 5555 5555 4444"}`)}}}
		orig := *rec
		o := r.FilterOriginals(rec)
		if len(o) == 0 {
			t.Fatalf("%s: nothing replaced", in)
		}
		if err := Seal(ctx, s, rec, o); err != nil {
			t.Fatal(err)
		}
		stored, _ := json.Marshal(rec)
		for _, v := range o {
			if strings.Contains(string(stored), v.Text) {
				t.Errorf("%s: original %q in the stored record %s", in, v.Text, stored)
			}
		}
		opened, err := Open(ctx, s, rec)
		if err != nil || opened.Erased+opened.Failed != 0 || len(opened.Originals) != len(o) {
			t.Fatalf("%s: open: %+v, %v", in, opened, err)
		}
		got := Reveal(rec, opened.Originals)
		if !sameJSON(t, got.Input, orig.Input) || got.Reason != orig.Reason ||
			got.Results[0].Error != orig.Results[0].Error || !sameJSON(t, got.Results[0].Patch, orig.Results[0].Patch) {
			t.Errorf("%s: revealed %s / %q / %+v", in, got.Input, got.Reason, got.Results[0])
		}
		if string(rec.Input) == string(got.Input) {
			t.Errorf("%s: Reveal changed the record it was given", in)
		}
	}
}

// A sealed value opens only for its record and mark, in its tenant; a
// forgotten session's values stay redacted and are counted as erased.
func TestSealedBinding(t *testing.T) {
	r := New([]byte("0123456789abcdef0123456789abcdef"))
	s := sealtest.NewSealer(t)
	ctx := context.Background()
	newRec := func(id, tenant, session string) *audit.Record {
		rec := &audit.Record{ID: id, Tenant: tenant, SessionID: session, Time: time.Now(),
			Input: json.RawMessage(`{"to":"bob@external.example","key":"AKIAIOSFODNN7EXAMPLE"}`)}
		if err := Seal(ctx, s, rec, r.FilterOriginals(rec)); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	a := newRec("a", "acme", "s1")
	b := newRec("b", "acme", "s2")

	moved := *b
	moved.Sealed = a.Sealed // a's values pasted into b
	if o, err := Open(ctx, s, &moved); err != nil || o.Failed != 2 || len(o.Originals) != 0 || !errors.Is(o.Err, seal.ErrTampered) {
		t.Errorf("moved to another record: %+v, %v", o, err)
	}
	other := *a
	other.Tenant = "globex"
	if o, err := Open(ctx, s, &other); err != nil || o.Failed != 2 || !errors.Is(o.Err, seal.ErrWrongTenant) {
		t.Errorf("another tenant: %+v, %v", o, err)
	}
	if _, err := s.ForgetSession(ctx, "acme", "s1"); err != nil {
		t.Fatal(err)
	}
	if o, err := Open(ctx, s, a); err != nil || o.Erased != 2 || len(o.Originals) != 0 {
		t.Errorf("forgotten session: %+v, %v", o, err)
	}
	if o, err := Open(ctx, s, b); err != nil || len(o.Originals) != 2 {
		t.Errorf("the other session after forget: %+v, %v", o, err)
	}
	bad := *b
	bad.Sealed = json.RawMessage(`{"email:00000000":"!!"}`)
	if _, err := Open(ctx, s, &bad); err == nil {
		t.Error("malformed envelope opened")
	}
}

// A tag collision (two values, one mark) reveals neither.
func TestOriginalsConflict(t *testing.T) {
	o := Originals{}
	o.add("email", []byte("0000abcd"), "a@b.example", false)
	o.add("email", []byte("0000abcd"), "c@d.example", false)
	o.add("email", []byte("1111abcd"), "e@f.example", false)
	o.add("email", []byte("1111abcd"), "e@f.example", false)
	if got := RevealString("[REDACTED:email:0000abcd] [REDACTED:email:1111abcd]", o); got != "[REDACTED:email:0000abcd] e@f.example" {
		t.Errorf("got %q", got)
	}
	rec := &audit.Record{ID: "x", Time: time.Now()}
	if err := Seal(context.Background(), sealtest.NewSealer(t), rec, o); err != nil || strings.Contains(string(rec.Sealed), "0000abcd") {
		t.Errorf("sealed %s, %v", rec.Sealed, err)
	}
}

func TestRevealMarks(t *testing.T) {
	o := Originals{"email:e87ea35c": {Text: `bob "the" <b@x.example>`}, "credit_card:c9ae62a8": {Text: "4111111111111111", Number: true}}
	cases := []struct{ in, want string }{
		{`to [REDACTED:email:e87ea35c].`, `to bob "the" <b@x.example>.`},
		{`[REDACTED:email:e87ea35]`, `[REDACTED:email:e87ea35]`},
		{`[REDACTED:email:E87EA35C]`, `[REDACTED:email:E87EA35C]`},
		{`[REDACTED:phone:e87ea35c]`, `[REDACTED:phone:e87ea35c]`},
		{`[REDACTED:[REDACTED:email:e87ea35c]`, `[REDACTED:bob "the" <b@x.example>`},
		{`[REDACTED:email:e87ea35c`, `[REDACTED:email:e87ea35c`},
	}
	for _, c := range cases {
		if got := RevealString(c.in, o); got != c.want {
			t.Errorf("RevealString(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	jcases := []struct{ in, want string }{
		{`{"to":"[REDACTED:email:e87ea35c]","n":1}`, `{"to":"bob \"the\" <b@x.example>","n":1}`},
		{`{"card":"[REDACTED:credit_card:c9ae62a8]"}`, `{"card":4111111111111111}`},
		{`{"card":"x [REDACTED:credit_card:c9ae62a8]"}`, `{"card":"x 4111111111111111"}`},
		{`{"[REDACTED:email:e87ea35c]":true}`, `{"bob \"the\" <b@x.example>":true}`},
		{`{"a":"none"}`, `{"a":"none"}`},
	}
	for _, c := range jcases {
		got := RevealJSON(json.RawMessage(c.in), o)
		if string(got) != c.want || !json.Valid(got) {
			t.Errorf("RevealJSON(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func FuzzRevealJSON(f *testing.F) {
	f.Add([]byte(`{"to":"[REDACTED:email:e87ea35c]","card":"[REDACTED:credit_card:c9ae62a8]"}`))
	f.Add([]byte(`["\"[REDACTED:email:e87ea35c]\"", "[REDACTED:credit_card:c9ae62a8"]`))
	o := Originals{"email:e87ea35c": {Text: "a\"\\\n\u2028b"}, "credit_card:c9ae62a8": {Text: "41", Number: true}}
	f.Fuzz(func(t *testing.T, b []byte) {
		in := string(b)
		got := RevealJSON(b, o)
		if string(b) != in {
			t.Fatal("input modified")
		}
		if json.Valid(b) && !json.Valid(got) {
			t.Fatalf("valid %q became invalid %q", b, got)
		}
	})
}
