package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/agbom"

	"github.com/wardenhq/warden/sqlite"
)

func TestAgBOMCommand(t *testing.T) {
	dir := t.TempDir()
	st, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	if err := st.UpdateAgBOM(context.Background(), &agbom.Update{Agent: "finance", Source: agbom.SourceACS, At: at,
		Put: []agbom.StoredComponent{{ID: "m", Type: "model", Doc: json.RawMessage(`{"id":"m","type":"model","name":"M","version":"1"}`)}}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, "", "agbom", "--data", dir)
	if code != 0 || !strings.Contains(out, "AGENT") || !strings.Contains(out, "finance  1           2026-11-25T10:00:00Z") {
		t.Fatalf("list: %d %q %q", code, out, errOut)
	}
	code, out, _ = cli(t, "", "agbom", "--data", dir, "--agent", "finance")
	if code != 0 || !strings.Contains(out, `"specVersion": "1.6"`) || !strings.Contains(out, `"type": "machine-learning-model"`) {
		t.Fatalf("cyclonedx: %d %s", code, out)
	}
	code, out, _ = cli(t, "", "agbom", "--data", dir, "--agent", "finance", "--format", "spdx")
	if code != 0 || !strings.Contains(out, `"type": "ai_AIPackage"`) {
		t.Fatalf("spdx: %d %s", code, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--agent", "nobody"}, `no AgBOM for agent "nobody"`},
		{[]string{"--agent", "finance", "--format", "swid"}, `--format: want "cyclonedx", "spdx" or "acs", got "swid"`},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		code, _, errOut := cli(t, "", append([]string{"agbom", "--data", dir}, tc.args...)...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: %d %q, want exit 1 and %q", tc.args, code, errOut, tc.want)
		}
	}
}
