package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
)

// TestBlobFileDiskFull fills a real (tiny tmpfs) filesystem: the blob write
// fails with ENOSPC, every Record of that batch fails closed, nothing
// answered as recorded is lost, and the store works again once there is room.
// It needs permission to mount (root in CI); otherwise it skips.
func TestBlobFileDiskFull(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs to fill (needs root): %v %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	if err := os.Chmod(dir, 0o700); err != nil { // a tmpfs root is 0777
		t.Fatal(err)
	}
	// Ballast to delete later, so the test can give the store room again.
	// 384 KiB: with 256 KiB, since schema 13 made the empty trace larger,
	// the room freed was used up again within four small records under
	// -race in about one run in seven (the WAL does not shrink while the
	// writer keeps appending), and the test failed for want of room, not
	// for a fault of the store.
	if err := os.WriteFile(dir+"/ballast", make([]byte, 384<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	input := json.RawMessage(`{"blob":"` + strings.Repeat("z", 20000) + `"}`)
	answered := map[string]error{}
	var firstFail error
	for i := 0; i < 200 && firstFail == nil; i++ {
		r := testRecord(fmt.Sprintf("fill-%03d", i), time.Now())
		r.Input = input
		err := s.Record(ctx, r)
		answered[r.ID] = err
		firstFail = err
	}
	if firstFail == nil {
		t.Fatal("a 1 MiB filesystem took 4 MB of records without an error")
	}
	// Whichever file hit the limit first (the blob file or SQLite's WAL),
	// the error says so.
	if msg := firstFail.Error(); !strings.Contains(msg, "no space left") && !strings.Contains(msg, "disk is full") {
		t.Errorf("error = %q, want it to say the disk is full", firstFail)
	}
	// Room again: the same store records again. (The first batch after a
	// full disk may still fail while SQLite resets its connection: that is
	// a fail-closed answer too.)
	if err := os.Remove(dir + "/ballast"); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		r := testRecord(fmt.Sprintf("after-%d", i), time.Now()) // small: they fit
		err := s.Record(ctx, r)
		answered[r.ID] = err
		if err != nil && i >= 2 {
			t.Errorf("Record %d after space was freed: %v", i, err)
		}
	}
	s.Close()
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatalf("reopen after ENOSPC: %v", err)
	}
	defer s.Close()
	got, err := audit.Collect(ctx, s, audit.Query{}, everything)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for _, r := range got {
		stored[r.ID] = true
		if strings.HasPrefix(r.ID, "fill-") && len(r.Input) != len(input) {
			t.Errorf("%s: input of %d bytes, want %d", r.ID, len(r.Input), len(input))
		}
	}
	for id, err := range answered {
		if err == nil && !stored[id] {
			t.Errorf("%s was answered as recorded but is missing", id)
		}
		if err != nil && stored[id] {
			t.Errorf("%s was answered with %q but is stored", id, err)
		}
	}
	t.Logf("%d records stored before the filesystem filled; then: %v", len(stored), firstFail)
}
