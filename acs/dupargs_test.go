package acs

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestAttackDuplicateArgNamesACS: ACS tool arguments are an object of
// named values ({name: {value}}); one naming "to" twice (evil first,
// company.io last), or as "to" and "To", is refused before anything is
// decided (-32600 naming the arguments), as every key an ACS body repeats.
func TestAttackDuplicateArgNamesACS(t *testing.T) {
	f := newFixture(t, nil)
	s := f.session()
	result(t, s.hello())
	n := len(f.store.Records())
	for _, dup := range []struct{ key, want string }{
		{"to", `duplicate key "to" in params.payload.arguments`},
		{"To", `keys "to" and "To" differ only in case in params.payload.arguments`},
	} {
		m := s.msg("steps/toolCallRequest", toolCall("send_email", map[string]any{"to": "ok@company.io", "zz_second": "evil@attacker.example"}), nil)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.Replace(b, []byte(`"zz_second"`), []byte(`"`+dup.key+`"`), 1)
		r := f.raw(b)
		e, _ := r["error"].(map[string]any)
		if errCode(r) != CodeInvalidRequest || !strings.Contains(e["message"].(string)+" "+string(mustJSON(e["data"])), dup.want) {
			t.Errorf("%s: %v, want -32600 with %s", b, r, dup.want)
		}
	}
	if recs := f.store.Records(); len(recs) != n {
		t.Errorf("%d records after the handshake's %d: a refused call was decided", len(recs), n)
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }
