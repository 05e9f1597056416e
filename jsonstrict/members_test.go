package jsonstrict

import (
	"bytes"
	"encoding/json"
	"testing"
)

// membersRef is what Members must give for text Check accepted: the
// members as encoding/json decodes the object (keys decoded, values raw,
// whitespace trimmed), in order.
func membersRef(data []byte) (keys []string, values [][]byte, ok bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil || m == nil {
		return nil, nil, false
	}
	d := json.NewDecoder(bytes.NewReader(data))
	if _, err := d.Token(); err != nil { // '{'
		return nil, nil, false
	}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, nil, false
		}
		k := t.(string)
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, nil, false
		}
		keys, values = append(keys, k), append(values, bytes.TrimSpace(m[k]))
	}
	return keys, values, true
}

func collect(data []byte) (keys []string, values [][]byte) {
	Members(data, func(k string, v []byte) bool {
		keys, values = append(keys, k), append(values, v)
		return true
	})
	return keys, values
}

func TestMembers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		keys []string
		vals []string
	}{
		{`{}`, nil, nil},
		{` { "a" : 1 , "b":"x\"}" ,"c":{"d":[1,{"e":"]"}]},"f":[],"g":null} `, []string{"a", "b", "c", "f", "g"},
			[]string{`1`, `"x\"}"`, `{"d":[1,{"e":"]"}]}`, `[]`, `null`}},
		{`{"\u0069d":7,"m\u00e9":true}`, []string{"id", "mé"}, []string{`7`, `true`}},
		{`[1,2]`, nil, nil},
		{`"s"`, nil, nil},
		{`null`, nil, nil},
		{``, nil, nil},
		{`{"a":`, nil, nil},     // not accepted by Check: no panic
		{`{"a":[1,2`, nil, nil}, // nor this
		{`{"a":1 "b":2}`, []string{"a"}, []string{"1"}},
	} {
		keys, vals := collect([]byte(tc.in))
		if len(keys) != len(tc.keys) {
			t.Errorf("%s: keys %q, want %q", tc.in, keys, tc.keys)
			continue
		}
		for i := range keys {
			if keys[i] != tc.keys[i] || string(vals[i]) != tc.vals[i] {
				t.Errorf("%s: member %d %q=%s, want %q=%s", tc.in, i, keys[i], vals[i], tc.keys[i], tc.vals[i])
			}
		}
	}
	// fn's false stops the walk.
	n := 0
	Members([]byte(`{"a":1,"b":2,"c":3}`), func(string, []byte) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("%d calls after the second returned false, want 2", n)
	}
}

// FuzzMembers: on text Check accepts, Members gives encoding/json's
// members; on any other text it does not panic.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":{"b":[1,"]}"]},"c":"\\"}`, `{"\u0061":" ","b" : [ ] }`, `[{"a":1}]`, `{"a":"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		keys, vals := collect(data)
		if Check(data) != nil {
			return
		}
		wk, wv, ok := membersRef(data)
		if !ok {
			if len(keys) != 0 {
				t.Fatalf("%q is not an object; Members gave %q", data, keys)
			}
			return
		}
		if len(keys) != len(wk) {
			t.Fatalf("%q: keys %q, want %q", data, keys, wk)
		}
		for i := range keys {
			if keys[i] != wk[i] || !bytes.Equal(vals[i], wv[i]) {
				t.Fatalf("%q: member %d %q=%s, want %q=%s", data, i, keys[i], vals[i], wk[i], wv[i])
			}
		}
	})
}
