package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
)

// TestTwoWritersShareADirectory: two stores on one directory (as two
// processes, e.g. `warden serve` and `warden mcp stdio`, share --data) write
// concurrently; every record comes back with its own input, none written over.
func TestTwoWritersShareADirectory(t *testing.T) {
	dir := t.TempDir()
	a := open(t, dir, Options{})
	b := open(t, dir, Options{})
	ctx := context.Background()
	var wg sync.WaitGroup
	for w, s := range []*Store{a, b} {
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 50 {
					id := fmt.Sprintf("w%d-g%d-%02d", w, g, i)
					r := testRecord(id, time.Now())
					r.Input = json.RawMessage(fmt.Sprintf(`{"id":%q,"pad":"%0500d"}`, id, i))
					if err := s.Record(ctx, r); err != nil {
						t.Errorf("%s: %v", id, err)
					}
				}
			}()
		}
	}
	wg.Wait()
	got, err := audit.Collect(ctx, a, audit.Query{}, everything)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2*4*50 {
		t.Fatalf("%d records, want %d", len(got), 2*4*50)
	}
	for _, r := range got {
		var in struct{ ID string }
		if err := json.Unmarshal(r.Input, &in); err != nil || in.ID != r.ID {
			t.Fatalf("record %s has the input of %q (%v): blobs were written over", r.ID, in.ID, err)
		}
	}
}
