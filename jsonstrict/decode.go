package jsonstrict

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Decode decodes data, one JSON value, into v as every JSON body warden
// reads is decoded: refused when Check refuses it (an *Error: a duplicate
// key, keys that differ only in case, invalid UTF-8, a lone surrogate; or an
// error wrapping ErrSyntax), and, when v points to a struct, when a member
// of the top-level object is not one of the struct's fields, spelled
// exactly as its json name (an *Error as well): encoding/json would match
// "Decision" to the field "decision", a reader of the body's text would not.
// A value that does not fit v's types is encoding/json's error.
func Decode(data []byte, v any) error { return decode(data, v, false) }

// DecodeOpen is Decode for a body that may carry other keys than v's
// fields, ignored as encoding/json ignores them (the hooks dispatch
// envelope): a key that names a field only in another case is still
// refused.
func DecodeOpen(data []byte, v any) error { return decode(data, v, true) }

func decode(data []byte, v any, open bool) error {
	if err := Check(data); err != nil {
		var anyValue any
		if errors.Is(err, ErrSyntax) {
			if jerr := json.Unmarshal(data, &anyValue); jerr != nil { // where the text stops being JSON
				return fmt.Errorf("%w: %v", ErrSyntax, jerr)
			}
		}
		return err
	}
	if names := fieldNames(v); names != nil {
		var unknown string
		found := false
		Members(data, func(k string, _ []byte) bool {
			if names[k] {
				return true
			}
			if !open || nameInCase(names, k) {
				unknown, found = strings.Clone(k), true
			}
			return !found
		})
		if found {
			want := make([]string, 0, len(names))
			for n := range names {
				want = append(want, strconv.Quote(n))
			}
			slices.Sort(want)
			msg := fmt.Sprintf("unknown key %q", unknown)
			if len(want) > 0 {
				msg += " (the keys are " + strings.Join(want, ", ") + ", spelled exactly)"
			}
			return &Error{Msg: msg}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if !open {
		dec.DisallowUnknownFields()
	}
	return dec.Decode(v)
}

// nameInCase reports whether k is one of names in another case.
func nameInCase(names map[string]bool, k string) bool {
	for n := range names {
		if strings.EqualFold(n, k) {
			return true
		}
	}
	return false
}

// fieldNames returns the json names of the exported fields of the struct v
// points to (nil when v does not point to a struct): a field's tag name,
// else its Go name; fields tagged "-" are not named. Embedded structs'
// fields are not looked into (no body warden reads has one).
func fieldNames(v any) map[string]bool {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	t = t.Elem()
	names := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		names[name] = true
	}
	return names
}
