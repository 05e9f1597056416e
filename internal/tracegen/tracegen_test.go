package tracegen

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestSealed: with Sealed, each record carries the sealed original of the
// mark in its input, deterministically, and nothing else changes.
func TestSealed(t *testing.T) {
	end := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	plain := New(200, end, time.Hour, 3)
	with := New(200, end, time.Hour, 3)
	with.Sealed = true
	for i := range plain.N {
		a, b := plain.Record(i), with.Record(i)
		if a.Sealed != nil {
			t.Fatalf("record %d has sealed values without Sealed", i)
		}
		var m map[string]string
		if err := json.Unmarshal(b.Sealed, &m); err != nil || len(m) != 1 {
			t.Fatalf("record %d: Sealed %s: %v", i, b.Sealed, err)
		}
		env, err := base64.RawURLEncoding.DecodeString(m[sealedMark])
		if err != nil || len(env) < 1+3+8+12+16 || env[0] != 1 {
			t.Fatalf("record %d: envelope %q: %v", i, m[sealedMark], err)
		}
		if !strings.Contains(string(b.Input), "[REDACTED:"+sealedMark+"]") {
			t.Fatalf("record %d: the input has no mark %s", i, sealedMark)
		}
		if again := with.Record(i); string(again.Sealed) != string(b.Sealed) {
			t.Fatalf("record %d: Sealed differs from one call to the next", i)
		}
		b.Sealed = nil
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("record %d differs beyond Sealed:\n%+v\n%+v", i, a, b)
		}
	}
}
