package jsonstrict

import (
	"errors"
	"reflect"
	"testing"
)

// TestWalk: WalkObject and WalkArray apply the key rules as Value does,
// hand each member's value to the caller at its start, and keep the paths
// of errors; Object records the spans of its members.
func TestWalk(t *testing.T) {
	var p Parser
	text := ` { "id" : 7 , "params":{"a":[1,"x"],"b":{}} } `
	p.Init(text)
	var keys []string
	var spans []Span
	var params any
	err := p.WalkObject(func(k string) error {
		keys = append(keys, k)
		if k == "params" {
			m, err := p.Object(&spans)
			params = m
			return err
		}
		_, err := p.Value()
		return err
	})
	if err == nil {
		err = p.End()
	}
	if err != nil || !reflect.DeepEqual(keys, []string{"id", "params"}) {
		t.Fatalf("keys %q, %v", keys, err)
	}
	if want := map[string]any{"a": []any{1.0, "x"}, "b": map[string]any{}}; !reflect.DeepEqual(params, want) {
		t.Fatalf("params %#v", params)
	}
	if len(spans) != 2 || text[spans[0].Start:spans[0].End] != `[1,"x"]` || spans[1].Key != "b" || text[spans[1].Start:spans[1].End] != `{}` {
		t.Fatalf("spans %+v", spans)
	}

	for _, tc := range []struct{ in, want string }{
		{`{"id":1,"ID":2}`, `keys "id" and "ID" differ only in case at the top level`},
		{`{"p":{"a":1,"a":2}}`, `duplicate key "a" in p`},
		{`[{"a":1},{"b":{"c":1,"c":2}}]`, `duplicate key "c" in b`}, // elements are paths of their own
		{`{"a":"\ud800"}`, `a string with a lone surrogate escape \ud800 (offset 6) in a`},
	} {
		p.Init(tc.in)
		err := walkAll(&p)
		if err == nil {
			err = p.End()
		}
		var amb *Error
		if !errors.As(err, &amb) || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.in, err, tc.want)
		}
	}
	p.Init(`{"a":1 "b":2}`)
	if err := p.WalkObject(func(string) error { _, err := p.Value(); return err }); !errors.Is(err, ErrSyntax) ||
		err.Error() != `invalid character '"' after object value at offset 7` {
		t.Errorf("syntax: %v", err)
	}
}

// walkAll walks the value at p's position, every object and array in it
// with WalkObject and WalkArray.
func walkAll(p *Parser) error {
	switch p.Peek() {
	case '{':
		return p.WalkObject(func(string) error { return walkAll(p) })
	case '[':
		return p.WalkArray(func() error { return walkAll(p) })
	}
	_, err := p.Value()
	return err
}

// TestAfterItem: what may follow a member's value or an array element, in
// a built value and in a walk alike.
func TestAfterItem(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":1 "b":2}`, `invalid character '"' after object value at offset 7`},
		{`{"a":1]`, `invalid character ']' after object value at offset 6`},
		{`{"a":1`, `unexpected end of JSON input at offset 6`},
		{`[1 2]`, `invalid character '2' after array element at offset 3`},
		{`[1}`, `invalid character '}' after array element at offset 2`},
		{`[1,`, `unexpected end of JSON input at offset 3`},
		{`[1`, `unexpected end of JSON input at offset 2`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var p Parser
			p.Init(tt.in)
			if _, err := p.Value(); !errors.Is(err, ErrSyntax) || err.Error() != tt.want {
				t.Errorf("Value: %v, want %q", err, tt.want)
			}
			p.Init(tt.in)
			if err := walkAll(&p); !errors.Is(err, ErrSyntax) || err.Error() != tt.want {
				t.Errorf("walk: %v, want %q", err, tt.want)
			}
		})
	}
}
