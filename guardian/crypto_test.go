package guardian_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/sigkey"
	"github.com/wardenhq/warden/sqlite"
)

// TestCheckpointsSignedWithACSKey: with acs.signing and trace.retention,
// the checkpoints retention writes are signed with the ML-DSA-65 key of
// acs.signing_key, verifiable with its public key alone, and the data
// directory's Ed25519 key is not created.
func TestCheckpointsSignedWithACSKey(t *testing.T) {
	dir := t.TempDir()
	key, err := sigkey.Generate(sigkey.MLDSA65, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sigkey.WriteKeyPair(key, filepath.Join(dir, "acs.key"), false); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	st, err := sqlite.Open(data, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	for i := range 3 {
		r := &audit.Record{ID: fmt.Sprintf("old%d", i), Time: old.Add(time.Duration(i) * time.Minute), Event: "tool.pre_call",
			Surface: "hook", Decision: "allow", Reason: "fine", Input: []byte(`{}`), Results: []warden.Result{}}
		if err := st.Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	cfgFile := filepath.Join(dir, "warden.yaml")
	if err := os.WriteFile(cfgFile, []byte("trace: {retention: 1d}\nacs:\n  signing: ml-dsa-65\n  signing_key: acs.key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	g, err := guardian.Open(guardian.Options{Config: cfg, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	// The first retention pass runs at once, in the background.
	deadline := time.Now().Add(10 * time.Second)
	var rep *sqlite.VerifyReport
	for {
		ro, err := sqlite.OpenReadOnly(data)
		if err != nil {
			t.Fatal(err)
		}
		rep, err = ro.VerifyWithPublicKey(context.Background(), key.Public())
		ro.Close()
		if err != nil {
			t.Fatal(err)
		}
		if rep.Checkpoint != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Checkpoint == nil || rep.Checkpoint.Algorithm != "ml-dsa-65" || rep.Checkpoint.Deleted != 3 {
		t.Fatalf("%+v %+v %+v", rep, rep.Broken, rep.Checkpoint)
	}
	if _, err := os.Stat(filepath.Join(data, sqlite.SignKeyFile)); !os.IsNotExist(err) {
		t.Errorf("%s exists (%v)", sqlite.SignKeyFile, err)
	}
}
