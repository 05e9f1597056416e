// Package jsontest decodes JSON as readers other than encoding/json do, for
// the tests that check warden forwards only JSON every reader reads alike.
// It is for tests only.
package jsontest

import (
	"bytes"
	"encoding/json"
)

// FirstWins decodes data keeping the first of duplicate keys (encoding/json
// keeps the last), with numbers as float64 like encoding/json; data must be
// valid JSON.
func FirstWins(data []byte) any {
	d := json.NewDecoder(bytes.NewReader(data))
	return firstWins(d)
}

func firstWins(d *json.Decoder) any {
	t, _ := d.Token()
	switch t {
	case json.Delim('{'):
		m := map[string]any{}
		for d.More() {
			k, _ := d.Token()
			v := firstWins(d)
			if _, ok := m[k.(string)]; !ok {
				m[k.(string)] = v
			}
		}
		d.Token()
		return m
	case json.Delim('['):
		a := []any{}
		for d.More() {
			a = append(a, firstWins(d))
		}
		d.Token()
		return a
	}
	return t
}
