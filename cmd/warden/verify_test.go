package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/sqlite"
)

func TestVerify(t *testing.T) {
	dir := t.TempDir()
	st, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		r := &audit.Record{ID: fmt.Sprintf("r%d", i), Time: time.Unix(int64(1000+i), 0), Event: "steps/toolCallRequest",
			Surface: "aos", Decision: "allow", Reason: "fine", Input: json.RawMessage(`{}`), Results: []warden.Result{}}
		if err := st.Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	// While the writer is open, as next to a server.
	code, out, errOut := cli(t, "", "verify", "--data", dir)
	if code != exitOK || !strings.HasPrefix(out, "ok: 5 records verified, head ") {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	recs, err := audit.Collect(context.Background(), st, audit.Query{}, 1)
	if err != nil || !strings.Contains(out, "head "+recs[0].Hash+"\n") {
		t.Fatalf("head is not the newest record's hash %v: %s", err, out)
	}
	st.Close()

	db, err := sql.Open("sqlite", filepath.Join(dir, sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE runs SET decision = 'deny' WHERE id = 'r3'`); err != nil {
		t.Fatal(err)
	}
	code, out, _ = cli(t, "", "verify", "--data", dir)
	if code != exitError || !strings.Contains(out, "BROKEN at record r3 (position 4, rowid 4): edited") || !strings.Contains(out, "3 records verified") {
		t.Fatalf("exit %d: %s", code, out)
	}
	code, out, _ = cli(t, "", "verify", "--data", dir, "-o", "json")
	var rep struct {
		OK     bool
		Broken struct{ Reason, ID string }
	}
	if code != exitError || json.Unmarshal([]byte(out), &rep) != nil || rep.OK || rep.Broken.Reason != "edited" || rep.Broken.ID != "r3" {
		t.Fatalf("exit %d: %s", code, out)
	}
	if code, _, _ := cli(t, "", "verify", "--data", dir, "-o", "yaml"); code != exitError {
		t.Fatalf("-o yaml: exit %d", code)
	}
}
