package sqlite

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/wardenhq/warden/backend"
	"github.com/wardenhq/warden/seal"
	"github.com/wardenhq/warden/seal/sealtest"
)

// sealKeyIndexes are the indexes of schema 16's seal_keys table.
var sealKeyIndexes = []string{
	"seal_keys_live:CREATE UNIQUE INDEX seal_keys_live ON seal_keys (tenant, period, session, kind) WHERE destroyed IS NULL",
}

func TestSealKeys(t *testing.T) {
	sealtest.RunKeyStore(t, func(t *testing.T) seal.KeyStore { return open(t, t.TempDir(), Options{}).SealKeys() })
}

func TestSealKeysBackend(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	if backend.Of(s).Seal == nil {
		t.Fatal("the SQLite backend keeps no sealing keys")
	}
}

// TestSealKeysSurviveRestart: keys and tombstones are in the database.
func TestSealKeysSurviveRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir, Options{})
	live := seal.WrappedKey{KeyRef: seal.KeyRef{Kind: seal.KindDEK, Tenant: "t1", Period: "2026-05"},
		ID: seal.KeyID{1}, KEK: "k1", Wrapped: []byte("wrapped DEK")}
	gone := seal.WrappedKey{KeyRef: seal.KeyRef{Kind: seal.KindSession, Tenant: "t1", Period: "2026-05", Session: "s1"},
		ID: seal.KeyID{2}, Parent: live.ID, Wrapped: []byte("wrapped session key")}
	for _, k := range []seal.WrappedKey{live, gone} {
		if _, err := s.SealKeys().Add(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.SealKeys().DestroySession(ctx, "t1", "s1"); err != nil || n != 1 {
		t.Fatalf("DestroySession = %d, %v", n, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ks := open(t, dir, Options{}).SealKeys()
	if got, err := ks.Live(ctx, live.KeyRef); err != nil || got.ID != live.ID || !bytes.Equal(got.Wrapped, live.Wrapped) {
		t.Fatalf("Live after a restart = %+v, %v", got, err)
	}
	if got, err := ks.Get(ctx, gone.KeyRef, gone.ID); err != nil || !got.Destroyed || got.Wrapped != nil {
		t.Fatalf("Get of a tombstone after a restart = %+v, %v", got, err)
	}
}

// TestSealKeysDestroyedBytesGone: after a destroy and a checkpoint, the
// wrapped bytes of the destroyed keys are in no file of the directory,
// while a live key's are (the check finds what is there).
func TestSealKeysDestroyedBytesGone(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir, Options{})
	ks := s.SealKeys()
	mark := func(tag byte) []byte { return append(bytes.Repeat([]byte{0xC3, tag}, 20), "-wrapped-marker"...) }
	var gone [][]byte
	for i := range 40 {
		k := seal.WrappedKey{KeyRef: seal.KeyRef{Kind: seal.KindSession, Tenant: "t1", Period: fmt.Sprintf("p%d", i), Session: "s" + string(rune('a'+i%2))},
			ID: seal.KeyID{byte(i), 7}, Wrapped: mark(byte(i))}
		if _, err := ks.Add(ctx, k); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			gone = append(gone, k.Wrapped)
		}
	}
	kept := mark(1)
	if n, err := ks.DestroySession(ctx, "t1", "sa"); err != nil || n != len(gone) {
		t.Fatalf("DestroySession = %d, %v; want %d", n, err, len(gone))
	}
	// The store stays open: the WAL, with the frames of the Adds, is
	// still there.
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	var all []byte
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			all = append(all, b...)
		}
	}
	if !bytes.Contains(all, kept) {
		t.Fatalf("a live key's wrapped bytes are in none of %v: the check reads the wrong files", files)
	}
	for i, w := range gone {
		if bytes.Contains(all, w) {
			t.Errorf("destroyed key %d's wrapped bytes are still in the files of %s", i, dir)
		}
	}
}
